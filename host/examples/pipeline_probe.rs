#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::Arc;
use std::time::Instant;
use toolhost::Dispatcher;
use toolhost::plugins::{PluginsConfig, Roots, load_plugins};
use toolhost::spill::ResultSpill;
use tools_core::{Home, Hooks, Registry, ToolContext};

fn main() {
    let mode = std::env::args().nth(1).unwrap_or("guarded".into());
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1_000_000);
    let lib = std::path::PathBuf::from("target/release/libfixture_good.so");
    let root = std::path::PathBuf::from("/tmp/perf-probe-root");
    let dir = root.join("plugins/good0");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(&lib, dir.join("libfixture_good.so")).unwrap();
    std::fs::write(
        dir.join("plugin.toml"),
        "name = \"good0\"\nversion = \"1.0.0\"\nlibrary = \"libfixture_good.so\"\napi = \"^0.1\"\n",
    )
    .unwrap();
    let home = Home::at(&root);
    let roots = Roots {
        user: Some(home.plugins_dir()),
        ..Roots::default()
    };
    let registry = Arc::new(Registry::new());
    let hooks = Arc::new(Hooks::new());
    let config = if mode == "inline" {
        PluginsConfig {
            timeout_secs: 0.0,
            ..PluginsConfig::default()
        }
    } else {
        PluginsConfig::default()
    };
    let _set = load_plugins(&home, &config, &roots, &registry, &hooks);
    let d = Dispatcher::new(
        registry,
        hooks,
        ResultSpill::new(std::env::temp_dir().join("x")),
    );
    let ctx = ToolContext::default();
    assert_eq!(d.call("good_noop", "{}", &ctx).text, "{}");
    let mut lat = Vec::with_capacity(n);
    let t0 = Instant::now();
    if mode == "async" {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            for _ in 0..n {
                let s = Instant::now();
                std::hint::black_box(d.call_async("good_noop", "{}", &ctx).await);
                lat.push(s.elapsed().as_nanos() as u64);
            }
        });
    } else {
        for _ in 0..n {
            let s = Instant::now();
            std::hint::black_box(d.call("good_noop", "{}", &ctx));
            lat.push(s.elapsed().as_nanos() as u64);
        }
    }
    let total = t0.elapsed();
    lat.sort();
    let p = |q: f64| lat[((n as f64) * q) as usize];
    println!(
        "{mode}: mean {:.0} ns  p50 {} p90 {} p99 {} p99.9 {} max {}",
        total.as_nanos() as f64 / n as f64,
        p(0.5),
        p(0.9),
        p(0.99),
        p(0.999),
        lat[n - 1]
    );
}
