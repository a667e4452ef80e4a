//! Parallel: `POST /v1beta/search` with `{"objective", "search_queries", "max_results"}`,
//! the key in `x-api-key` and the beta header; the description is the joined excerpts.

use reqwest::blocking::Client;
use serde::Deserialize;
use serde_json::json;

use super::{Hit, Provider, SearchError, ranked, send};

/// The documented endpoint.
pub const DEFAULT_URL: &str = "https://api.parallel.ai";

/// Parallel with an API key.
pub struct Parallel {
    /// `https://api.parallel.ai` unless overridden.
    pub base_url: String,
    /// `PARALLEL_API_KEY`.
    pub key: String,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    results: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    url: String,
    #[serde(default)]
    excerpts: Vec<String>,
}

impl Provider for Parallel {
    fn name(&self) -> &'static str {
        "parallel"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/v1beta/search", self.base_url.trim_end_matches('/'));
        let body = json!({ "objective": query, "search_queries": [query], "max_results": limit });
        let request = client
            .post(url)
            .header("x-api-key", &self.key)
            .header("parallel-beta", "search-extract-2025-10-10")
            .json(&body);
        let answer: Answer = send(self.name(), request)?;
        let items = answer
            .results
            .into_iter()
            .map(|i| (i.title.unwrap_or_default(), i.url, i.excerpts.join(" … ")));
        Ok(ranked(items, limit))
    }
}
