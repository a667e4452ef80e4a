//! Native plugins: load time of 10 plugins, and a no-op plugin tool through the whole
//! dispatch pipeline (target ≤ 2 µs), beside a core no-op and the bare ABI call. After
//! the calls it prints the CPU the process burns while idle (the executor's spinning
//! must stop once calls stop). The same no-op runs through a plugin process too
//! (target ≤ 25 µs), beside the start-up cost of one plugin process, and through a
//! Hermes Python plugin run by `python3`.
//!
//! Needs the fixture plugins built in release mode:
//! `cargo build --release --workspace && cargo bench -p toolhost --bench plugins`.

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use toolhost::Dispatcher;
use toolhost::plugins::executor::{Executor, ExecutorOptions, Job, Waited};
use toolhost::plugins::{PluginSet, PluginStatus, PluginsSettings, Roots, load_plugins};
use toolhost::spill::ResultSpill;
use tools_core::{Home, Hooks, Registry, ToolContext, ToolEntry};

/// `target/release/libfixture_good.so`, next to the bench binary's `deps/`.
fn good_library() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>");
    let lib = dir.join(format!(
        "{}fixture_good{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    ));
    assert!(
        lib.exists(),
        "{} is missing: run `cargo build --release --workspace` first",
        lib.display()
    );
    lib
}

/// A plugin root with `count` copies of the good fixture (each its own library file,
/// so each is really loaded).
fn plugin_root(count: usize) -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("tempdir");
    let lib = good_library();
    let file = lib.file_name().expect("file name").to_owned();
    for i in 0..count {
        let dir = root.path().join("plugins").join(format!("good{i}"));
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::copy(&lib, dir.join(&file)).expect("copy");
        std::fs::write(
            dir.join("plugin.toml"),
            format!(
                "name = \"good{i}\"\nversion = \"1.0.0\"\nlibrary = \"{}\"\napi = \"^0.1\"\n",
                file.to_string_lossy()
            ),
        )
        .expect("manifest");
    }
    root
}

fn load(home: &Path, config: &PluginsSettings) -> (Arc<Registry>, Arc<Hooks>, PluginSet) {
    let home = Home::at(home);
    let roots = Roots {
        user: Some(home.plugins_dir()),
        ..Roots::default()
    };
    let registry = Arc::new(Registry::new());
    let hooks = Arc::new(Hooks::new());
    let set = load_plugins(&home, config, &roots, &registry, &hooks);
    (registry, hooks, set)
}

fn load_ten(c: &mut Criterion) {
    let mut group = c.benchmark_group("plugins");
    // Each iteration maps ten fresh copies of the fixture (~8 MB each with line tables)
    // that stay mapped until the process ends, so their disk space is only freed then:
    // keep the iteration count (and the disk it holds, ~5 GB) small.
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(2));
    group.bench_function("discover+check+load+register 10 plugins", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                // Fresh files every time: a path is loaded once per process.
                let root = plugin_root(10);
                let started = Instant::now();
                let (_, _, set) = load(root.path(), &PluginsSettings::default());
                total += started.elapsed();
                let records = set.records();
                assert_eq!(records.len(), 10);
                assert!(
                    records.iter().all(|r| r.status == PluginStatus::Loaded),
                    "{:?}",
                    set.failures()
                );
                // Libraries stay mapped (never unloaded); the files may go.
            }
            total
        })
    });
    group.finish();
}

/// A job that does nothing: what the hand-off itself costs.
struct NoopJob;

impl Job for NoopJob {
    type Output = ();

    fn run(&mut self, _cancel: &std::sync::atomic::AtomicBool) {}
}

fn dispatcher(registry: Arc<Registry>, hooks: Arc<Hooks>) -> Dispatcher {
    Dispatcher::new(
        registry,
        hooks,
        ResultSpill::new(std::env::temp_dir().join("toolhost-bench-results")),
    )
}

fn noop_call(c: &mut Criterion) {
    let root = plugin_root(1);
    let ctx = ToolContext::default();

    // Default limits: the handler runs on the blocking pool under a timeout.
    let (registry, hooks, _set) = load(root.path(), &PluginsSettings::default());
    let guarded = dispatcher(Arc::clone(&registry), hooks);
    // timeout_secs = 0: the handler runs inline on the caller's thread.
    let inline_config = PluginsSettings {
        timeout_secs: 0.0,
        ..PluginsSettings::default()
    };
    let (inline_registry, inline_hooks, inline_set) = load(root.path(), &inline_config);
    let inline = dispatcher(Arc::clone(&inline_registry), inline_hooks);

    // A core tool doing the same nothing, for comparison.
    let core_registry = Arc::new(Registry::new());
    core_registry.register(
        ToolEntry::builder("core_noop", "bench")
            .sync_handler(|_, _| Ok(json!({})))
            .build()
            .expect("tool"),
    );
    let core = dispatcher(core_registry, Arc::new(Hooks::new()));

    for d in [&guarded, &inline] {
        assert_eq!(d.call("good_noop", "{}", &ctx).text, "{}");
    }
    assert_eq!(core.call("core_noop", "{}", &ctx).text, "{}");

    let mut group = c.benchmark_group("noop through the pipeline");
    group.bench_function("core tool (Dispatcher::call)", |b| {
        b.iter(|| black_box(core.call(black_box("core_noop"), black_box("{}"), &ctx)))
    });
    group.bench_function("plugin tool, inline (timeout_secs = 0)", |b| {
        b.iter(|| black_box(inline.call(black_box("good_noop"), black_box("{}"), &ctx)))
    });
    group.bench_function("plugin tool, executor + timeout (default)", |b| {
        b.iter(|| black_box(guarded.call(black_box("good_noop"), black_box("{}"), &ctx)))
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    group.bench_function("plugin tool, executor + timeout, from async", |b| {
        b.iter_custom(|iters| {
            runtime.block_on(async {
                let started = Instant::now();
                for _ in 0..iters {
                    black_box(guarded.call_async("good_noop", "{}", &ctx).await);
                }
                started.elapsed()
            })
        })
    });
    let runtime_handle = inline_set
        .get("good0")
        .and_then(|r| r.runtime)
        .expect("runtime");
    let args = json!({});
    // Tool number 1 of the good fixture is good_noop.
    assert_eq!(
        runtime_handle.call_inline(1, &args, &ctx).unwrap(),
        json!({})
    );
    group.bench_function("ABI call alone (JSON both sides, no pipeline)", |b| {
        b.iter(|| black_box(runtime_handle.call_inline(1, black_box(&args), &ctx)))
    });
    let executor = Executor::new(ExecutorOptions::plugin_calls());
    group.bench_function("executor hand-off alone (no-op job, submit + wait)", |b| {
        b.iter(
            || match executor.submit(NoopJob).expect("submit").wait(None, None) {
                Waited::Done(output) => black_box(output),
                other => panic!("{other:?}"),
            },
        )
    });
    group.finish();
    idle_cpu();
}

/// A no-op plugin tool through the pipeline with the plugin in its own process
/// (`plugins.default_isolation = "process"`; goal ≤ 25 µs), and the start of one
/// plugin process (spawn, load, register).
fn process_noop_call(c: &mut Criterion) {
    let root = plugin_root(1);
    let ctx = ToolContext::default();
    let config = PluginsSettings {
        default_isolation: toolhost::plugins::Isolation::Process,
        ..PluginsSettings::default()
    };
    let (registry, hooks, set) = load(root.path(), &config);
    assert!(
        set.records().iter().all(|r| r.pid.is_some()),
        "{:?}",
        set.failures()
    );
    let process = dispatcher(registry, hooks);
    assert_eq!(process.call("good_noop", "{}", &ctx).text, "{}");
    let (python_root, python_config) = python_noop_plugin();
    let (registry, hooks, set) = load(python_root.path(), &python_config);
    assert!(
        set.records().iter().all(|r| r.pid.is_some()),
        "{:?}",
        set.failures()
    );
    let python = dispatcher(registry, hooks);
    assert_eq!(python.call("py_noop", "{}", &ctx).text, "{}");
    let mut group = c.benchmark_group("noop through the pipeline");
    group.bench_function("plugin tool, out of process (isolation = process)", |b| {
        b.iter(|| black_box(process.call(black_box("good_noop"), black_box("{}"), &ctx)))
    });
    group.bench_function("Hermes Python plugin tool (python3 child)", |b| {
        b.iter(|| black_box(python.call(black_box("py_noop"), black_box("{}"), &ctx)))
    });
    group.finish();

    let mut group = c.benchmark_group("plugins");
    group.sample_size(10);
    group.bench_function("start one plugin process (spawn+load+register)", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                let root = plugin_root(1);
                let started = Instant::now();
                let (_, _, set) = load(root.path(), &config);
                total += started.elapsed();
                assert!(set.records().iter().all(|r| r.pid.is_some()));
            }
            total
        })
    });
    group.finish();
}

/// A Hermes directory plugin with one no-op tool, enabled, run by `python3`.
fn python_noop_plugin() -> (tempfile::TempDir, PluginsSettings) {
    let root = tempfile::tempdir().expect("tempdir");
    let dir = root.path().join("plugins").join("pynoop");
    std::fs::create_dir_all(&dir).expect("mkdir");
    std::fs::write(
        dir.join("plugin.yaml"),
        "name: pynoop\nversion: \"1.0.0\"\n",
    )
    .expect("yaml");
    std::fs::write(
        dir.join("__init__.py"),
        "def register(ctx):\n    ctx.register_tool('py_noop', 'pynoop', {'description': 'no-op'}, lambda args, **kw: '{}')\n",
    )
    .expect("init");
    let config = PluginsSettings {
        enabled: vec!["pynoop".into()],
        python: toolhost::plugins::python::PythonSettings {
            no_entry_points: true,
            ..Default::default()
        },
        ..PluginsSettings::default()
    };
    (root, config)
}

/// CPU time of all live threads of this process (Linux `/proc`; `None` elsewhere).
fn process_cpu() -> Option<Duration> {
    let mut total = 0u64;
    for task in std::fs::read_dir("/proc/self/task").ok()? {
        let stat = std::fs::read_to_string(task.ok()?.path().join("schedstat")).ok()?;
        total += stat.split_whitespace().next()?.parse::<u64>().ok()?;
    }
    Some(Duration::from_nanos(total))
}

/// After a burst of calls, the executor's workers spin for at most tens of µs and then
/// park: the process should use (almost) no CPU while nothing is called.
fn idle_cpu() {
    let ctx = ToolContext::default();
    let root = plugin_root(1);
    let (registry, hooks, _set) = load(root.path(), &PluginsSettings::default());
    let guarded = dispatcher(registry, hooks);
    for _ in 0..100_000 {
        black_box(guarded.call("good_noop", "{}", &ctx));
    }
    let (Some(before), started) = (process_cpu(), Instant::now()) else {
        return;
    };
    std::thread::sleep(Duration::from_secs(1));
    let Some(after) = process_cpu() else { return };
    println!(
        "idle after a burst of 100000 calls: {:.1} µs of CPU in {:.2} s, all threads ({} executor threads alive)",
        (after.saturating_sub(before)).as_secs_f64() * 1e6,
        started.elapsed().as_secs_f64(),
        toolhost::plugins::call::executor().workers(),
    );
}

criterion_group!(benches, load_ten, noop_call, process_noop_call);
criterion_main!(benches);
