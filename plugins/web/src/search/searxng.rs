//! SearXNG (self-hosted metasearch, no key): `GET <url>/search?q=…&format=json`.
//! The instance must have the `json` format enabled in its `settings.yml`.

use reqwest::blocking::Client;
use serde::Deserialize;

use super::{Hit, Provider, SearchError, ranked, send};

/// A SearXNG instance at `base_url`.
pub struct Searxng {
    /// The instance, e.g. `http://localhost:8080`.
    pub base_url: String,
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

impl Provider for Searxng {
    fn name(&self) -> &'static str {
        "searxng"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/search", self.base_url.trim_end_matches('/'));
        let url =
            url::Url::parse_with_params(&url, [("q", query), ("format", "json")]).map_err(|e| {
                SearchError::Http {
                    provider: self.name(),
                    message: e.to_string(),
                }
            })?;
        let request = client.get(url).header("Accept", "application/json");
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
