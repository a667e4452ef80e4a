//! Each provider against a stand-in server on 127.0.0.1 that checks the documented
//! request (path, method, auth) and answers in the documented shape.

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{Value, json};

use super::backend::{NoBackend, SearchSettings, choose};
use super::{SearchArgs, run};
use crate::test_server::{Request, Response, Server};

fn search_with(
    backend: &str,
    key_var: &str,
    answer: fn(&Request) -> Response,
) -> (Value, Vec<Request>) {
    let server = Server::start(answer);
    let mut vars = HashMap::new();
    vars.insert(key_var.to_string(), "test-key".to_string());
    let settings = SearchSettings {
        backend: Some(backend.into()),
        searxng_url: (backend == "searxng").then(|| server.base.clone()),
        base_url: (backend != "searxng").then(|| server.base.clone()),
    };
    let provider = choose(&settings, &|v| vars.get(v).cloned()).unwrap();
    let client = super::client(Duration::from_secs(5)).unwrap();
    let args = SearchArgs {
        query: "rust crabs".into(),
        limit: Some(2),
    };
    let out = run(args, provider.as_ref(), &client).unwrap();
    (out, server.requests())
}

fn assert_two_hits(out: &Value) {
    assert_eq!(out["success"], true, "{out}");
    let web = out["data"]["web"].as_array().unwrap();
    assert_eq!(web.len(), 2, "{out}");
    assert_eq!(web[0]["title"], "First");
    assert_eq!(web[0]["url"], "https://one.example/");
    assert_eq!(web[0]["description"], "first snippet");
    assert_eq!(web[1]["position"], 2);
}

#[test]
fn searxng() {
    let (out, requests) = search_with("searxng", "SEARXNG_URL", |r| {
        assert!(r.path.starts_with("/search?"), "{}", r.path);
        assert!(
            r.path.contains("format=json") && r.path.contains("q=rust+crabs"),
            "{}",
            r.path
        );
        Response::json(json!({ "results": [
            { "title": "First", "url": "https://one.example/", "content": "first snippet" },
            { "title": "Second", "url": "https://two.example/", "content": "second" },
            { "title": "Third", "url": "https://three.example/", "content": "third" }
        ]}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].method, "GET");
}

#[test]
fn brave() {
    let (out, requests) = search_with("brave", "BRAVE_SEARCH_API_KEY", |r| {
        assert!(r.path.starts_with("/res/v1/web/search?"), "{}", r.path);
        Response::json(json!({ "type": "search", "web": { "results": [
            { "title": "First", "url": "https://one.example/", "description": "first snippet" },
            { "title": "Second", "url": "https://two.example/", "description": "second" }
        ]}}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].header("x-subscription-token"), Some("test-key"));
    assert!(requests[0].path.contains("count=2"));
}

#[test]
fn tavily() {
    let (out, requests) = search_with("tavily", "TAVILY_API_KEY", |r| {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/search"));
        Response::json(json!({ "query": "rust crabs", "results": [
            { "title": "First", "url": "https://one.example/", "content": "first snippet", "score": 0.9 },
            { "title": "Second", "url": "https://two.example/", "content": "second", "score": 0.5 }
        ]}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(requests[0].json()["max_results"], 2);
}

#[test]
fn exa() {
    let (out, requests) = search_with("exa", "EXA_API_KEY", |r| {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/search"));
        Response::json(json!({ "requestId": "x", "results": [
            { "title": "First", "url": "https://one.example/", "highlights": ["first", "snippet"] },
            { "title": "Second", "url": "https://two.example/", "highlights": [] }
        ]}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
    assert_eq!(requests[0].json()["numResults"], 2);
}

#[test]
fn firecrawl() {
    let (out, requests) = search_with("firecrawl", "FIRECRAWL_API_KEY", |r| {
        assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/v2/search"));
        Response::json(json!({ "success": true, "data": { "web": [
            { "title": "First", "url": "https://one.example/", "description": "first snippet" },
            { "title": "Second", "url": "https://two.example/", "description": "second" }
        ]}}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].header("authorization"), Some("Bearer test-key"));
    assert_eq!(requests[0].json()["limit"], 2);
}

#[test]
fn parallel() {
    let (out, requests) = search_with("parallel", "PARALLEL_API_KEY", |r| {
        assert_eq!(
            (r.method.as_str(), r.path.as_str()),
            ("POST", "/v1beta/search")
        );
        Response::json(json!({ "search_id": "s", "results": [
            { "title": "First", "url": "https://one.example/", "excerpts": ["first snippet"] },
            { "title": "Second", "url": "https://two.example/", "excerpts": ["second"] }
        ]}))
    });
    assert_two_hits(&out);
    assert_eq!(requests[0].header("x-api-key"), Some("test-key"));
    assert_eq!(requests[0].json()["max_results"], 2);
}

#[test]
fn provider_errors_are_results_the_model_reads() {
    let (out, _) = search_with("brave", "BRAVE_SEARCH_API_KEY", |_| {
        Response::new(429, "application/json", r#"{"error":"rate limited"}"#)
    });
    assert_eq!(out["success"], false);
    assert!(out["error"].as_str().unwrap().contains("HTTP 429"), "{out}");
}

#[test]
fn choice_follows_backend_then_first_present() {
    let env = |vars: &'static [(&'static str, &'static str)]| {
        move |v: &str| {
            vars.iter()
                .find(|(k, _)| *k == v)
                .map(|(_, x)| x.to_string())
        }
    };
    let none = SearchSettings::default();
    type Case<'a> = (
        &'a SearchSettings,
        &'static [(&'static str, &'static str)],
        Result<&'static str, NoBackend>,
    );
    let cases: [Case<'_>; 5] = [
        (
            &none,
            &[("EXA_API_KEY", "k"), ("TAVILY_API_KEY", "k")],
            Ok("tavily"),
        ),
        (
            &none,
            &[("SEARXNG_URL", "http://s"), ("BRAVE_SEARCH_API_KEY", "k")],
            Ok("searxng"),
        ),
        (&none, &[("FIRECRAWL_API_URL", "http://f")], Ok("firecrawl")),
        (
            &none,
            &[("BRAVE_SEARCH_API_KEY", " ")],
            Err(NoBackend::None),
        ),
        (
            &SearchSettings {
                backend: Some("exa".into()),
                ..SearchSettings::default()
            },
            &[("BRAVE_SEARCH_API_KEY", "k")],
            Err(NoBackend::Missing {
                backend: "exa".into(),
                needs: "EXA_API_KEY".into(),
            }),
        ),
    ];
    for (settings, vars, expected) in cases {
        let lookup = env(vars);
        let got = choose(settings, &lookup).map(|p| p.name());
        assert_eq!(got, expected, "{vars:?}");
    }
    let unknown = SearchSettings {
        backend: Some("bing".into()),
        ..SearchSettings::default()
    };
    assert!(matches!(
        choose(&unknown, &|_| None),
        Err(NoBackend::Unknown(_))
    ));
}
