//! Brave Search API: `GET /res/v1/web/search?q=…&count=…` with the key in
//! `X-Subscription-Token`; results under `web.results`.

use reqwest::blocking::Client;
use serde::Deserialize;

use super::{Hit, Provider, SearchError, ranked, send};

/// The documented endpoint.
pub const DEFAULT_URL: &str = "https://api.search.brave.com";

/// Brave with an API key.
pub struct Brave {
    /// `https://api.search.brave.com` unless overridden.
    pub base_url: String,
    /// `BRAVE_SEARCH_API_KEY`.
    pub key: String,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    web: Option<Web>,
}

#[derive(Deserialize)]
struct Web {
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
    description: String,
}

impl Provider for Brave {
    fn name(&self) -> &'static str {
        "brave"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/res/v1/web/search", self.base_url.trim_end_matches('/'));
        // The API returns at most 20 results per request.
        let count = limit.min(20).to_string();
        let url = url::Url::parse_with_params(&url, [("q", query), ("count", count.as_str())])
            .map_err(|e| SearchError::Http {
                provider: self.name(),
                message: e.to_string(),
            })?;
        let request = client
            .get(url)
            .header("Accept", "application/json")
            .header("X-Subscription-Token", &self.key);
        let answer: Answer = send(self.name(), request)?;
        let items = answer.web.map(|w| w.results).unwrap_or_default();
        Ok(ranked(
            items.into_iter().map(|i| (i.title, i.url, i.description)),
            limit,
        ))
    }
}
