//! Tests of batch planning and execution.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tools_core::{Hooks, Registry, ToolEntry};

use super::*;
use crate::spill::ResultSpill;

/// Tracks how many calls run at once.
#[derive(Default)]
struct Gauge {
    now: AtomicUsize,
    max: AtomicUsize,
}

impl Gauge {
    fn enter(&self) -> usize {
        let now = self.now.fetch_add(1, Ordering::SeqCst) + 1;
        self.max.fetch_max(now, Ordering::SeqCst);
        now
    }
    fn leave(&self) {
        self.now.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Sleeps `ms` in 5 ms steps, stopping early when cancelled.
fn nap(ms: u64, ctx: &ToolContext) -> bool {
    let mut left = ms;
    while left > 0 {
        if ctx.cancel.is_cancelled() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(left.min(5)));
        left = left.saturating_sub(5);
    }
    true
}

fn tool(name: &str, parallelism: Parallelism, gauge: &Arc<Gauge>) -> ToolEntry {
    let gauge = Arc::clone(gauge);
    ToolEntry::builder(name, "test")
        .parallelism(parallelism)
        .sync_handler(move |args, ctx| {
            let at_start = gauge.enter();
            let finished = nap(args["ms"].as_u64().unwrap_or(0), ctx);
            gauge.leave();
            Ok(json!({"id": args["id"], "at_start": at_start, "finished": finished}))
        })
        .build()
        .unwrap()
}

/// A sleeper that ignores cancellation.
fn stubborn() -> ToolEntry {
    ToolEntry::builder("stubborn", "test")
        .sync_handler(|args, _| {
            std::thread::sleep(Duration::from_millis(args["ms"].as_u64().unwrap_or(0)));
            Ok(json!({"done": true}))
        })
        .build()
        .unwrap()
}

fn dispatcher(gauge: &Arc<Gauge>) -> (Dispatcher, tempfile::TempDir) {
    let registry = Arc::new(Registry::new());
    registry.register(tool("par", Parallelism::Safe, gauge));
    registry.register(tool("excl", Parallelism::Exclusive, gauge));
    registry.register(tool("file", Parallelism::PathScoped("path".into()), gauge));
    registry.register(stubborn());
    let dir = tempfile::tempdir().unwrap();
    let d = Dispatcher::new(
        registry,
        Arc::new(Hooks::new()),
        ResultSpill::new(dir.path().join("r")),
    );
    (d, dir)
}

fn tc(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: args.to_string(),
    }
}

fn content(m: &ToolMessage) -> Value {
    serde_json::from_str(&m.content).unwrap()
}

#[test]
fn plan_cuts_runs_at_barriers_and_overlapping_paths() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls = vec![
        tc("0", "par", json!({})),
        tc("1", "par", json!({})),
        tc("2", "excl", json!({})),
        tc("3", "file", json!({"path": "/srv/a/x.txt"})),
        tc("4", "file", json!({"path": "/srv/b/y.txt"})),
        tc("5", "file", json!({"path": "/srv/a"})),
        tc("6", "par", json!({})),
        tc("7", "unknown_tool", json!({})),
        tc("8", "par", json!({})),
        ToolCall {
            id: "9".into(),
            name: "par".into(),
            arguments: "not json".into(),
        },
        tc("10", "file", json!({})),
    ];
    let resolve: PathResolver = Arc::new(|_, p| PathBuf::from(p));
    let segments = plan(&d, &calls, &ToolContext::default(), &resolve);
    assert_eq!(
        segments,
        vec![
            Segment::Parallel(vec![0, 1]),
            Segment::Sequential(2),
            Segment::Parallel(vec![3, 4]),
            Segment::Parallel(vec![5, 6]),
            Segment::Sequential(7),
            Segment::Sequential(8),
            Segment::Sequential(9),
            Segment::Sequential(10),
        ]
    );
}

#[test]
fn canonical_path_resolves_dots_and_missing_tails() {
    let dir = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(dir.path()).unwrap();
    let got = canonical_path(&dir.path().join("sub/../new/file.txt"));
    assert_eq!(got, real.join("new/file.txt"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn results_come_back_in_call_order_with_ids() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls: Vec<_> = (0..6)
        .map(|i| tc(&format!("c{i}"), "par", json!({"id": i, "ms": 60 - i * 10})))
        .collect();
    let out = dispatch_batch(&d, &calls, &BatchOptions::default()).await;
    assert_eq!(out.len(), 6);
    for (i, m) in out.iter().enumerate() {
        assert_eq!(m.tool_call_id, format!("c{i}"));
        assert_eq!(m.role, "tool");
        assert_eq!(m.name, "par");
        assert_eq!(content(m)["id"], i);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallel_calls_overlap_but_never_exceed_the_limit() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls: Vec<_> = (0..20)
        .map(|i| tc(&i.to_string(), "par", json!({"ms": 40})))
        .collect();
    let options = BatchOptions {
        max_concurrency: 8,
        ..BatchOptions::default()
    };
    dispatch_batch(&d, &calls, &options).await;
    let max = gauge.max.load(Ordering::SeqCst);
    assert!(max > 1, "calls never overlapped");
    assert!(max <= 8, "{max} calls ran at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exclusive_calls_run_alone() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls = vec![
        tc("a", "par", json!({"ms": 30})),
        tc("b", "par", json!({"ms": 30})),
        tc("c", "excl", json!({"ms": 1})),
        tc("d", "par", json!({"ms": 30})),
    ];
    let out = dispatch_batch(&d, &calls, &BatchOptions::default()).await;
    assert_eq!(
        content(&out[2])["at_start"],
        1,
        "the barrier started while others ran"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn same_path_writes_do_not_overlap() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls: Vec<_> = (0..4)
        .map(|i| {
            tc(
                &i.to_string(),
                "file",
                json!({"path": "/tmp/same-file.txt", "ms": 20}),
            )
        })
        .collect();
    let out = dispatch_batch(&d, &calls, &BatchOptions::default()).await;
    for m in &out {
        assert_eq!(content(m)["at_start"], 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deadline_turns_unfinished_calls_into_timeouts() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls = vec![
        tc("fast", "excl", json!({"ms": 1})),
        tc("slow", "excl", json!({"ms": 30_000})),
        tc("never", "excl", json!({"ms": 1})),
    ];
    let options = BatchOptions {
        deadline: Some(Duration::from_millis(300)),
        ..BatchOptions::default()
    };
    let out = dispatch_batch(&d, &calls, &options).await;
    assert_eq!(content(&out[0])["finished"], true);
    assert_eq!(
        content(&out[1])["error"],
        "Error executing excl: timed out after 0.3s (batch deadline)"
    );
    assert_eq!(
        content(&out[2])["error"],
        "Error executing excl: timed out after 0.3s (batch deadline)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_cancels_unstarted_and_stops_running_calls() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls = vec![
        tc("running", "excl", json!({"ms": 30_000})),
        tc("later", "par", json!({"ms": 1})),
    ];
    let options = BatchOptions::default();
    let interrupt = options.interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        interrupt.cancel();
    });
    let out = dispatch_batch(&d, &calls, &options).await;
    // The running call saw the cancellation and returned within the grace period.
    assert_eq!(content(&out[0])["finished"], false);
    assert_eq!(
        content(&out[1])["error"],
        "Tool execution cancelled: par was not started because the user interrupted"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_abandons_calls_that_ignore_cancellation() {
    let gauge = Arc::new(Gauge::default());
    let (d, _dir) = dispatcher(&gauge);
    let calls = vec![tc("s", "stubborn", json!({"ms": 1_500}))];
    let options = BatchOptions {
        cancel_grace: Duration::from_millis(50),
        ..BatchOptions::default()
    };
    let interrupt = options.interrupt.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        interrupt.cancel();
    });
    let out = dispatch_batch(&d, &calls, &options).await;
    assert_eq!(
        content(&out[0])["error"],
        "Tool execution cancelled: stubborn was interrupted by the user before it finished"
    );
}
