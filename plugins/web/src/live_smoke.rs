//! Live smoke tests: each web-search provider, each extract API and the vision model,
//! called for real. Every test needs its provider's key (or URL) and is ignored in
//! ordinary runs; CI, which has no keys, skips them by name (`--skip live_smoke`). Run
//! them explicitly, with the keys you have:
//!
//! ```sh
//! BRAVE_SEARCH_API_KEY=… cargo test -p toolhost-plugin-web --lib live_smoke::search_brave -- --ignored
//! ```
//!
//! A test run without its key fails naming the variable — it never passes silently.

use std::time::Duration;

use serde_json::json;

use crate::extract_api;
use crate::search::backend::{SearchSettings, choose};
use crate::settings::Settings;
use crate::vision::{self, VisionArgs, VisionSettings};

fn env(var: &str) -> Option<String> {
    std::env::var(var).ok().filter(|v| !v.trim().is_empty())
}

/// The value of `var`, or a failure saying to set it.
fn require(var: &str) -> String {
    env(var).unwrap_or_else(|| {
        panic!("live smoke test: set {var} to run it (it calls the real service)")
    })
}

fn client() -> reqwest::blocking::Client {
    crate::search::client(Duration::from_secs(30)).expect("HTTP client")
}

/// Search `backend` for a stable query; at least one real hit comes back.
fn search(backend: &str, var: &str) {
    require(var);
    let settings = SearchSettings {
        backend: Some(backend.into()),
        ..SearchSettings::default()
    };
    let provider = choose(&settings, &env).expect("provider");
    let hits = provider
        .search(&client(), "Rust programming language", 3)
        .unwrap_or_else(|e| panic!("{backend}: {e}"));
    assert!(!hits.is_empty(), "{backend} returned no results");
    assert!(hits.len() <= 3, "{backend} ignored the limit: {hits:?}");
    for hit in &hits {
        assert!(hit.url.starts_with("http"), "{backend}: {hit:?}");
    }
}

#[test]
#[ignore = "needs SEARXNG_URL (live)"]
fn search_searxng() {
    search("searxng", "SEARXNG_URL");
}

#[test]
#[ignore = "needs BRAVE_SEARCH_API_KEY (live)"]
fn search_brave() {
    search("brave", "BRAVE_SEARCH_API_KEY");
}

#[test]
#[ignore = "needs TAVILY_API_KEY (live)"]
fn search_tavily() {
    search("tavily", "TAVILY_API_KEY");
}

#[test]
#[ignore = "needs EXA_API_KEY (live)"]
fn search_exa() {
    search("exa", "EXA_API_KEY");
}

#[test]
#[ignore = "needs FIRECRAWL_API_KEY (live)"]
fn search_firecrawl() {
    search("firecrawl", "FIRECRAWL_API_KEY");
}

#[test]
#[ignore = "needs PARALLEL_API_KEY (live)"]
fn search_parallel() {
    search("parallel", "PARALLEL_API_KEY");
}

/// Read example.com through `backend`'s extract API.
fn extract(backend: &str, var: &str) {
    require(var);
    let api = extract_api::choose(Some(backend), None, &env)
        .expect("provider")
        .expect("a provider, not local extraction");
    let url = "https://example.com/".to_string();
    let pages = api.extract(&client(), std::slice::from_ref(&url));
    assert_eq!(pages.len(), 1, "{backend}: {pages:?}");
    assert_eq!(pages[0].error, None, "{backend}: {pages:?}");
    assert!(
        pages[0].content.contains("Example Domain"),
        "{backend}: {pages:?}"
    );
}

#[test]
#[ignore = "needs FIRECRAWL_API_KEY (live)"]
fn extract_firecrawl() {
    extract("firecrawl", "FIRECRAWL_API_KEY");
}

#[test]
#[ignore = "needs TAVILY_API_KEY (live)"]
fn extract_tavily() {
    extract("tavily", "TAVILY_API_KEY");
}

#[test]
#[ignore = "needs EXA_API_KEY (live)"]
fn extract_exa() {
    extract("exa", "EXA_API_KEY");
}

#[test]
#[ignore = "needs PARALLEL_API_KEY (live)"]
fn extract_parallel() {
    extract("parallel", "PARALLEL_API_KEY");
}

/// `vision_analyze` with the default model settings (OpenAI's API; `OPENAI_BASE_URL`
/// and `TOOLHOST_VISION_MODEL` point it elsewhere) on a plain red image.
#[test]
#[ignore = "needs OPENAI_API_KEY (live)"]
fn vision_openai() {
    let key = require("OPENAI_API_KEY");
    let mut settings = VisionSettings::default();
    if let Some(base) = env("OPENAI_BASE_URL") {
        settings.base_url = base;
    }
    if let Some(model) = env("TOOLHOST_VISION_MODEL") {
        settings.model = model;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("red.png");
    image::RgbImage::from_pixel(64, 64, image::Rgb([220, 0, 0]))
        .save(&path)
        .expect("write the image");
    let args: VisionArgs = serde_json::from_value(json!({
        "image_url": path.display().to_string(),
        "question": "What is the colour of this image? Answer with one word.",
    }))
    .expect("arguments");
    let out = vision::run(args, &settings, Some(&key), &Settings::default()).expect("a result");
    assert_eq!(out["success"], true, "{out}");
    let answer = out.to_string().to_lowercase();
    assert!(answer.contains("red"), "{out}");
}
