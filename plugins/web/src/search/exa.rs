//! Exa: `POST /search` with `{"query", "numResults", "contents": {"highlights": true}}`
//! and the key in `x-api-key`; the description is the joined highlights.

use reqwest::blocking::Client;
use serde::Deserialize;
use serde_json::json;

use super::{Hit, Provider, SearchError, ranked, send};

/// The documented endpoint.
pub const DEFAULT_URL: &str = "https://api.exa.ai";

/// Exa with an API key.
pub struct Exa {
    /// `https://api.exa.ai` unless overridden.
    pub base_url: String,
    /// `EXA_API_KEY`.
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
    highlights: Vec<String>,
}

impl Provider for Exa {
    fn name(&self) -> &'static str {
        "exa"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/search", self.base_url.trim_end_matches('/'));
        let body =
            json!({ "query": query, "numResults": limit, "contents": { "highlights": true } });
        let request = client.post(url).header("x-api-key", &self.key).json(&body);
        let answer: Answer = send(self.name(), request)?;
        let items = answer
            .results
            .into_iter()
            .map(|i| (i.title.unwrap_or_default(), i.url, i.highlights.join(" ")));
        Ok(ranked(items, limit))
    }
}
