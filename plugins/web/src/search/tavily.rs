//! Tavily: `POST /search` with `{"query", "max_results"}` and the key as a bearer
//! token; results under `results` with the snippet in `content`.

use reqwest::blocking::Client;
use serde::Deserialize;
use serde_json::json;

use super::{Hit, Provider, SearchError, ranked, send};

/// The documented endpoint.
pub const DEFAULT_URL: &str = "https://api.tavily.com";

/// Tavily with an API key.
pub struct Tavily {
    /// `https://api.tavily.com` unless overridden.
    pub base_url: String,
    /// `TAVILY_API_KEY`.
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
    title: String,
    #[serde(default)]
    url: String,
    #[serde(default)]
    content: String,
}

impl Provider for Tavily {
    fn name(&self) -> &'static str {
        "tavily"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/search", self.base_url.trim_end_matches('/'));
        // The API allows at most 20 results.
        let body = json!({ "query": query, "max_results": limit.min(20), "search_depth": "basic" });
        let request = client.post(url).bearer_auth(&self.key).json(&body);
        let answer: Answer = send(self.name(), request)?;
        Ok(ranked(
            answer
                .results
                .into_iter()
                .map(|i| (i.title, i.url, i.content)),
            limit,
        ))
    }
}
