//! `web_extract` on a 1 MB HTML article: the conversion alone (HTML → the page's
//! `<article>` landmark, src/landmark.rs → Markdown, image placeholders; goal ≤ 20 ms), and the whole tool on
//! the same page served on 127.0.0.1 (fetch, content checks, conversion, head + tail
//! window, spill file).
//!
//! `cargo bench -p toolhost-plugin-web --bench web -- --warm-up-time 1 --measurement-time 3`
//! (`WEB_BENCH_MARKDOWN=FILE` also writes the converted page, for
//! `benches/hermes_web_extract.py`).
//!
//! For instruction counts, `WEB_BENCH_CONVERT_ONLY=N` converts the page N times and
//! exits without criterion:
//! `WEB_BENCH_CONVERT_ONLY=1 valgrind --tool=callgrind target/release/deps/web-<hash> --bench`.

// A benchmark harness, like a test: failing loudly on a broken setup is the point.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::{Read, Write};
use std::net::TcpListener;

use criterion::{Criterion, criterion_group};
use serde_json::json;
use toolhost_plugin_web::bench_api::{Settings, convert_html, web_extract};

/// An article page of at least `size` bytes: navigation, sections of paragraphs with
/// links and emphasis, lists, images, tables, a footer.
fn article(size: usize) -> String {
    let mut html = String::from(
        "<!doctype html><html><head><title>Bench article</title></head><body><nav><ul>",
    );
    for i in 0..50 {
        let _ = write!(html, "<li><a href='/nav/{i}'>Menu item {i}</a></li>");
    }
    html.push_str("</ul></nav><main><article><h1>A long article</h1>");
    let mut section = 0;
    while html.len() < size {
        section += 1;
        let _ = write!(html, "<h2>Section {section}</h2>");
        for p in 0..6 {
            let _ = write!(
                html,
                "<p>Paragraph {p} of section {section}: the quick brown fox jumps over the lazy dog, \
                 and <em>then</em> reads <a href='/ref/{section}/{p}'>reference {p}</a> before \
                 writing a sentence long enough to look like prose in a real article.</p>"
            );
        }
        let _ = write!(
            html,
            "<ul><li>point one</li><li>point two</li><li>point three</li></ul>\
             <img src='/img/{section}.png' alt='figure {section}'>\
             <table><tr><th>key</th><th>value</th></tr><tr><td>a</td><td>{section}</td></tr></table>"
        );
    }
    html.push_str("</article></main><footer>© bench</footer></body></html>");
    html
}

/// Serve `body` as text/html on 127.0.0.1 for every request; the URL.
fn serve(body: String) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/article", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let mut request = [0u8; 4096];
            let _ = stream.read(&mut request);
            let _ = write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(body.as_bytes());
        }
    });
    url
}

fn bench(c: &mut Criterion) {
    let page = article(1024 * 1024);
    let (title, markdown) = convert_html(page.as_bytes(), "http://127.0.0.1/article").unwrap();
    assert_eq!(title, "Bench article");
    assert!(
        markdown.contains("[IMAGE: figure 1]"),
        "{}",
        &markdown[..500]
    );
    eprintln!(
        "page: {} bytes of HTML → {} chars of Markdown",
        page.len(),
        markdown.chars().count()
    );
    // For Hermes' side (benches/hermes_web_extract.py): the same page's Markdown.
    if let Some(path) = std::env::var_os("WEB_BENCH_MARKDOWN") {
        std::fs::write(&path, &markdown).unwrap();
    }

    let url = serve(page.clone());
    let cache = tempfile::tempdir().unwrap();
    let settings = Settings {
        allow_private_networks: true,
        cache_dir: Some(cache.path().to_path_buf()),
        ..Settings::default()
    };
    let args = json!({ "urls": [url], "char_limit": 15000 });
    let out = web_extract(args.clone(), &settings, cache.path()).unwrap();
    assert!(out.to_string().contains("Section 1"), "{out}");

    let mut group = c.benchmark_group("web_extract");
    group.sample_size(10);
    group.bench_function("convert_1mb_html", |b| {
        b.iter(|| convert_html(black_box(page.as_bytes()), "http://127.0.0.1/article"))
    });
    group.bench_function("tool_1mb_local_page", |b| {
        b.iter(|| web_extract(black_box(args.clone()), &settings, cache.path()))
    });
    group.finish();
}

/// `WEB_BENCH_CONVERT_ONLY=N`: only the conversion, N times, for callgrind.
fn convert_only(times: usize) {
    let page = article(1024 * 1024);
    let mut chars = 0;
    for _ in 0..times {
        let converted = convert_html(black_box(page.as_bytes()), "http://127.0.0.1/article");
        chars = converted.unwrap().1.len();
    }
    eprintln!("converted {times}× ({chars} bytes of Markdown)");
}

criterion_group!(benches, bench);

fn main() {
    if let Some(times) = std::env::var("WEB_BENCH_CONVERT_ONLY")
        .ok()
        .and_then(|n| n.parse().ok())
    {
        convert_only(times);
        return;
    }
    benches();
    Criterion::default().configure_from_args().final_summary();
}
