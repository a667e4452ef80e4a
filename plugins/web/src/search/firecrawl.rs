//! Firecrawl: `POST /v2/search` with `{"query", "limit"}` and the key as a bearer
//! token; results under `data.web` (v2) or `data` as a list (v1-style answers).

use reqwest::blocking::Client;
use serde::Deserialize;
use serde_json::json;

use super::{Hit, Provider, SearchError, ranked, send};

/// The documented endpoint.
pub const DEFAULT_URL: &str = "https://api.firecrawl.dev";

/// Firecrawl (cloud with a key, or a self-hosted `FIRECRAWL_API_URL`).
pub struct Firecrawl {
    /// `https://api.firecrawl.dev` unless overridden.
    pub base_url: String,
    /// `FIRECRAWL_API_KEY` (may be empty for a self-hosted instance).
    pub key: String,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Data {
    Sources {
        #[serde(default)]
        web: Vec<Item>,
    },
    List(Vec<Item>),
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

impl Provider for Firecrawl {
    fn name(&self) -> &'static str {
        "firecrawl"
    }

    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError> {
        let url = format!("{}/v2/search", self.base_url.trim_end_matches('/'));
        let mut request = client
            .post(url)
            .json(&json!({ "query": query, "limit": limit }));
        if !self.key.is_empty() {
            request = request.bearer_auth(&self.key);
        }
        let answer: Answer = send(self.name(), request)?;
        let items = match answer.data {
            Some(Data::Sources { web }) | Some(Data::List(web)) => web,
            None => Vec::new(),
        };
        Ok(ranked(
            items.into_iter().map(|i| (i.title, i.url, i.description)),
            limit,
        ))
    }
}
