//! The browser tools against a real Chromium: `browser_snapshot` of a page of 1,000
//! elements once it has loaded (compact and full; goal ≤ 50 ms; the `_axtree` rows
//! render the accessibility tree instead, the fallback path), and the first
//! `browser_navigate` of a task, Chromium's cold start included (measured, no goal).
//!
//! Needs Chromium (`TOOLHOST_CHROMIUM` or `chromium` on `PATH`):
//! `cargo bench -p toolhost-plugin-browser --bench browser -- --warm-up-time 1 --measurement-time 3`

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, criterion_group, criterion_main};
use toolhost_plugin_browser::bench_api::{
    Registry, Settings, navigate, snapshot, snapshot_from_tree,
};

const TASK: &str = "bench";

/// 1,000 elements: 250 each of links, buttons, text inputs and paragraphs, in sections.
fn page() -> String {
    let mut html =
        String::from("<!doctype html><html><head><title>1000 elements</title></head><body>");
    for i in 0..250 {
        let _ = write!(
            html,
            "<a href='/item/{i}'>Link {i}</a><button>Button {i}</button>\
             <input name='field{i}' placeholder='Field {i}'><p>Paragraph {i}</p>"
        );
    }
    html.push_str("</body></html>");
    html
}

fn serve(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/page", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

fn bench(c: &mut Criterion) {
    let settings = Settings {
        allow_private_networks: true,
        ..Settings::default()
    };
    assert!(
        settings.chromium_binary().is_some(),
        "Chromium is not installed: set TOOLHOST_CHROMIUM or install chromium"
    );
    let url = serve(page());

    let registry = Registry::new(settings.clone());
    let reply = navigate(&registry, &url, TASK);
    assert_eq!(reply["success"], true, "{reply}");
    let compact = snapshot(&registry, false, TASK);
    let refs = compact["snapshot"]
        .as_str()
        .unwrap_or_default()
        .matches("[ref=")
        .count();
    assert!(
        refs >= 750,
        "{refs} refs in the compact snapshot: {compact:.300}"
    );
    eprintln!("compact snapshot: {refs} element refs");

    let mut group = c.benchmark_group("browser");
    group.sample_size(20);
    group.bench_function("snapshot_1000_elements_compact", |b| {
        b.iter(|| snapshot(&registry, false, TASK))
    });
    group.bench_function("snapshot_1000_elements_full", |b| {
        b.iter(|| snapshot(&registry, true, TASK))
    });
    // The accessibility-tree path the walker replaced (its fallback), for comparison.
    group.bench_function("snapshot_1000_elements_compact_axtree", |b| {
        b.iter(|| snapshot_from_tree(&registry, false, TASK))
    });
    group.bench_function("snapshot_1000_elements_full_axtree", |b| {
        b.iter(|| snapshot_from_tree(&registry, true, TASK))
    });
    drop(registry);

    group.sample_size(10);
    group.sampling_mode(SamplingMode::Flat);
    group.measurement_time(Duration::from_secs(15));
    group.bench_function("first_navigate_with_cold_start", |b| {
        b.iter_custom(|iterations| {
            let mut total = Duration::ZERO;
            for _ in 0..iterations {
                let registry = Registry::new(settings.clone());
                let start = Instant::now();
                let reply = navigate(&registry, &url, TASK);
                total += start.elapsed();
                assert_eq!(reply["success"], true, "{reply}");
                drop(registry);
            }
            total
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
