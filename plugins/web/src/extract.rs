//! The `web_extract` tool: up to five URLs fetched concurrently and converted locally
//! to clean Markdown or text, each cut to a character budget.

use std::path::Path;

use serde::Deserialize;
use toolhost_plugin_api::prelude::*;

use crate::convert::convert;
use crate::fetch::{client, fetch};
use crate::settings::Settings;
use crate::window::window;

/// Most URLs per call.
pub const MAX_URLS: usize = 5;
/// Bounds of `char_limit`.
const CHAR_LIMIT_RANGE: (usize, usize) = (2_000, 500_000);

/// The arguments of `web_extract`.
#[derive(Debug, Deserialize)]
pub struct ExtractArgs {
    /// URLs to read (strings, or search results with a `url`/`href` field).
    urls: Vec<Value>,
    /// Per-page character budget.
    #[serde(default)]
    char_limit: Option<usize>,
}

/// The model-facing schema (Hermes' parameters).
pub fn schema() -> Value {
    json!({
        "description": "Read web pages and PDFs: each URL is fetched and converted to clean Markdown (the main content, without navigation) or text. Pages within the character budget (default 15000) come back whole; longer ones as a head + tail window with a footer naming the file that holds the full text and the read_file call for the omitted middle. Images appear as [IMAGE: alt] placeholders. If a page cannot be read, try the browser tools.",
        "parameters": {
            "type": "object",
            "properties": {
                "urls": {
                    "type": "array",
                    "items": { "type": "string" },
                    "description": "The URLs to read (at most 5 per call)",
                    "maxItems": MAX_URLS
                },
                "char_limit": {
                    "type": "integer",
                    "description": "Per-page character budget (default 15000). Raise it to see more of a long page inline.",
                    "minimum": CHAR_LIMIT_RANGE.0
                }
            },
            "required": ["urls"]
        }
    })
}

/// The URL inside one `urls` item: a string, or an object with `url` or `href`.
fn url_of(item: &Value) -> Option<&str> {
    match item {
        Value::String(s) => Some(s),
        Value::Object(map) => ["url", "href"].iter().find_map(|k| map.get(*k)?.as_str()),
        _ => None,
    }
}

/// Run `web_extract`.
pub fn run(args: ExtractArgs, settings: &Settings, cache_dir: &Path) -> ToolResult {
    if args.urls.is_empty() {
        return Ok(tool_error("urls is empty: give at least one URL"));
    }
    let limit = args
        .char_limit
        .unwrap_or(settings.char_limit)
        .clamp(CHAR_LIMIT_RANGE.0, CHAR_LIMIT_RANGE.1);
    let client = client(settings).map_err(|e| ToolError::new(e.to_string()))?;
    let env = |name: &str| std::env::var(name).ok();
    match crate::extract_api::choose(
        settings.extract_backend.as_deref(),
        settings.extract_base_url.as_deref(),
        &env,
    ) {
        Err(err) => return Ok(tool_error(err.to_string())),
        Ok(Some(api)) => return Ok(through_api(&api, &client, &args.urls, limit, cache_dir)),
        Ok(None) => {}
    }
    let results: Vec<Value> = std::thread::scope(|scope| {
        let handles: Vec<_> = args
            .urls
            .iter()
            .take(MAX_URLS)
            .enumerate()
            .map(|(index, item)| {
                let client = &client;
                scope.spawn(move || match url_of(item) {
                    Some(url) => one(client, settings, url, limit, cache_dir),
                    None => entry("", "", "", Some(format!(
                        "invalid URL item at index {index}: expected a URL string or an object with a string 'url' or 'href' field"
                    ))),
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| entry("", "", "", Some("the fetch panicked".into())))
            })
            .collect()
    });
    Ok(json!({ "results": results }))
}

/// `web_extract` through a provider's extract API (`extract_api.rs`): only http(s)
/// URLs are sent; each page gets the same window and spill file as a local one.
fn through_api(
    api: &crate::extract_api::ExtractApi,
    client: &reqwest::blocking::Client,
    items: &[Value],
    limit: usize,
    cache_dir: &Path,
) -> Value {
    let mut results: Vec<Option<Value>> = Vec::new();
    let mut asked = Vec::new();
    for (index, item) in items.iter().take(MAX_URLS).enumerate() {
        match url_of(item) {
            Some(url) if url.starts_with("https://") || url.starts_with("http://") => {
                asked.push(url.to_string());
                results.push(None);
            }
            Some(url) => results.push(Some(entry(
                url,
                "",
                "",
                Some("only http and https URLs can be read".into()),
            ))),
            None => results.push(Some(entry("", "", "", Some(format!(
                "invalid URL item at index {index}: expected a URL string or an object with a string 'url' or 'href' field"
            ))))),
        }
    }
    let mut pages = api.extract(client, &asked).into_iter();
    let results: Vec<Value> = results
        .into_iter()
        .map(|slot| {
            slot.unwrap_or_else(|| match pages.next() {
                Some(page) if page.error.is_none() && !page.content.trim().is_empty() => {
                    let (content, _) = window(&page.content, &page.url, limit, cache_dir);
                    entry(&page.url, &page.title, &content, None)
                }
                Some(page) => entry(
                    &page.url,
                    &page.title,
                    "",
                    Some(
                        page.error
                            .unwrap_or_else(|| "the page has no readable text".into()),
                    ),
                ),
                None => entry("", "", "", Some("the provider returned nothing".into())),
            })
        })
        .collect();
    json!({ "results": results, "backend": api.name })
}

fn entry(url: &str, title: &str, content: &str, error: Option<String>) -> Value {
    json!({ "url": url, "title": title, "content": content, "error": error })
}

fn one(
    client: &reqwest::blocking::Client,
    settings: &Settings,
    url: &str,
    limit: usize,
    cache_dir: &Path,
) -> Value {
    let fetched = match fetch(client, settings, url) {
        Ok(f) => f,
        Err(e) => return entry(url, "", "", Some(e.to_string())),
    };
    match convert(&fetched.media_type, &fetched.body, fetched.url.as_str()) {
        Ok(page) if page.content.trim().is_empty() => entry(
            url,
            &page.title,
            "",
            Some("the page has no readable text".into()),
        ),
        Ok(page) => {
            let (content, _) = window(&page.content, fetched.url.as_str(), limit, cache_dir);
            entry(url, &page.title, &content, None)
        }
        Err(e) => entry(url, "", "", Some(e.to_string())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::{Response, Server, pdf_with_text};

    const ARTICLE: &str = r#"<html><head><title>Tide Pools</title></head><body>
        <nav><a href="/">Home</a> | <a href="/menu">Navigation menu entry</a></nav>
        <article><h1>Tide Pools</h1>
        <p>Tide pools are rocky pools on the sea shore which are filled with sea water when the tide goes out, home to anemones, crabs and small fish.</p>
        <p>They are exposed to strong sunlight and waves, and their inhabitants have adapted to a habitat that changes twice a day with the tides.</p>
        <p><img src="/anemone.jpg" alt="a green anemone"></p>
        </article></body></html>"#;

    fn site() -> Server {
        Server::start(|req| match req.path.as_str() {
            "/article" => Response::new(200, "text/html; charset=utf-8", ARTICLE),
            "/paper.pdf" => {
                Response::new(200, "application/pdf", pdf_with_text("Hello from a PDF"))
            }
            "/hop" => Response::redirect("/article"),
            "/loop" => Response::redirect("/loop"),
            "/big" => Response::new(200, "text/plain", vec![b'a'; 2 * 1024 * 1024]),
            "/long" => Response::new(200, "text/plain", "word ".repeat(2000)),
            "/photo" => Response::new(200, "image/png", vec![0x89, b'P', b'N', b'G']),
            _ => Response::new(404, "text/plain", "no"),
        })
    }

    fn open() -> Settings {
        Settings {
            allow_private_networks: true,
            max_bytes: 1024 * 1024,
            ..Settings::default()
        }
    }

    fn extract(settings: &Settings, urls: Value, char_limit: Option<usize>) -> Vec<Value> {
        let dir = tempfile::tempdir().unwrap();
        let args = ExtractArgs {
            urls: serde_json::from_value(urls).unwrap(),
            char_limit,
        };
        let out = run(args, settings, dir.path()).unwrap();
        out["results"].as_array().unwrap().clone()
    }

    #[test]
    fn reads_an_article_as_markdown() {
        let server = site();
        let results = extract(&open(), json!([format!("{}/article", server.base)]), None);
        let page = &results[0];
        assert_eq!(page["error"], Value::Null, "{page}");
        assert_eq!(page["title"], "Tide Pools");
        let content = page["content"].as_str().unwrap();
        assert!(
            content.contains("rocky pools on the sea shore"),
            "{content}"
        );
        assert!(content.contains("[IMAGE: a green anemone]"), "{content}");
        assert!(!content.contains("Navigation menu entry"), "{content}");
    }

    #[test]
    fn a_configured_provider_reads_the_pages_and_the_window_applies() {
        let provider = Server::start(|_| {
            Response::json(json!({"results": [
                {"url": "https://a.example/", "raw_content": "word ".repeat(3000)}]}))
        });
        let api = crate::extract_api::ExtractApi {
            name: "tavily".into(),
            base_url: provider.base.clone(),
            key: "tv-test".into(),
        };
        let dir = tempfile::tempdir().unwrap();
        let client = client(&Settings::default()).unwrap();
        let out = through_api(
            &api,
            &client,
            &[json!("https://a.example/"), json!("file:///etc/passwd")],
            2_000,
            dir.path(),
        );
        let results = out["results"].as_array().unwrap();
        assert_eq!(out["backend"], "tavily");
        let content = results[0]["content"].as_str().unwrap();
        assert!(
            content.len() < 3_000 && content.contains("word"),
            "{content}"
        );
        assert!(results[1]["error"].as_str().unwrap().contains("http"));
        let requests = provider.requests.lock().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].json()["urls"], json!(["https://a.example/"]));
        assert_eq!(requests[0].header("authorization"), Some("Bearer tv-test"));
    }

    #[test]
    fn an_unknown_extract_backend_is_a_readable_error() {
        let settings = Settings {
            extract_backend: Some("bing".into()),
            ..Settings::default()
        };
        let dir = tempfile::tempdir().unwrap();
        let args = ExtractArgs {
            urls: vec![json!("https://a.example/")],
            char_limit: None,
        };
        let out = run(args, &settings, dir.path()).unwrap();
        assert!(
            out["error"]
                .as_str()
                .unwrap()
                .contains("unknown web extract backend"),
            "{out}"
        );
    }

    #[test]
    fn reads_a_pdf() {
        let server = site();
        let results = extract(&open(), json!([format!("{}/paper.pdf", server.base)]), None);
        assert!(
            results[0]["content"]
                .as_str()
                .unwrap()
                .contains("Hello from a PDF"),
            "{}",
            results[0]
        );
    }

    #[test]
    fn follows_redirects_but_not_forever() {
        let server = site();
        let results = extract(
            &open(),
            json!([format!("{}/hop", server.base), { "url": format!("{}/loop", server.base) }]),
            None,
        );
        assert!(
            results[0]["content"]
                .as_str()
                .unwrap()
                .contains("Tide pools"),
            "{}",
            results[0]
        );
        assert!(
            results[1]["error"]
                .as_str()
                .unwrap()
                .contains("too many redirects"),
            "{}",
            results[1]
        );
    }

    #[test]
    fn caps_size_and_refuses_binary_types() {
        let server = site();
        let results = extract(
            &open(),
            json!([
                format!("{}/big", server.base),
                format!("{}/photo", server.base)
            ]),
            None,
        );
        assert!(
            results[0]["error"]
                .as_str()
                .unwrap()
                .contains("larger than"),
            "{}",
            results[0]
        );
        assert!(
            results[1]["error"]
                .as_str()
                .unwrap()
                .contains("unsupported content type"),
            "{}",
            results[1]
        );
    }

    #[test]
    fn long_pages_are_windowed() {
        let server = site();
        let results = extract(
            &open(),
            json!([format!("{}/long", server.base)]),
            Some(2000),
        );
        let content = results[0]["content"].as_str().unwrap();
        assert!(content.contains("[TRUNCATED]"), "{content}");
        assert!(content.chars().count() < 2600, "{}", content.len());
    }

    #[test]
    fn policy_refuses_loopback_by_default() {
        let server = site();
        let closed = Settings::default();
        let by_ip = format!("{}/article", server.base);
        let by_name = by_ip.replace("127.0.0.1", "localhost");
        let results = extract(&closed, json!([by_ip, by_name, "file:///etc/passwd"]), None);
        for result in &results {
            assert!(
                result["error"].as_str().unwrap().starts_with("Blocked"),
                "{result}"
            );
        }
        assert!(server.requests().is_empty());
    }

    #[test]
    fn policy_applies_to_redirect_targets() {
        // The stand-in server is exempt by name; where it redirects is judged again, by
        // URL (a literal metadata address) and by resolution (a name for loopback).
        let server = Server::start(|req| match req.path.as_str() {
            "/to-metadata" => Response::redirect("http://169.254.169.254/latest/meta-data/"),
            _ => Response::redirect("http://localhost/admin"),
        });
        let settings = Settings {
            allowed_hosts: vec!["127.0.0.1".into()],
            ..Settings::default()
        };
        let results = extract(
            &settings,
            json!([
                format!("{}/to-metadata", server.base),
                format!("{}/to-localhost", server.base)
            ]),
            None,
        );
        for result in &results {
            assert!(
                result["error"].as_str().unwrap().starts_with("Blocked"),
                "{result}"
            );
        }
        assert_eq!(server.requests().len(), 2);
    }

    #[test]
    fn bad_items_get_their_own_error() {
        let results = extract(&open(), json!([42]), None);
        assert!(
            results[0]["error"].as_str().unwrap().contains("index 0"),
            "{}",
            results[0]
        );
    }
}
