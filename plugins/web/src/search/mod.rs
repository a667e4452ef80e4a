//! The `web_search` tool: one query sent to one search provider, answered in Hermes'
//! shape `{"success": true, "data": {"web": [{title, url, description, position}]}}`.
//!
//! Providers sit behind [`Provider`]; which one runs is [`backend::choose`]'s decision
//! (the configured `backend`, else the first whose URL or key is present).

pub mod backend;
mod brave;
mod exa;
mod firecrawl;
mod parallel;
mod searxng;
mod tavily;

use std::time::Duration;

use reqwest::blocking::{Client, RequestBuilder};
use serde::{Deserialize, Serialize};
use toolhost_plugin_api::prelude::*;

/// One search result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Hit {
    /// The page title.
    pub title: String,
    /// The page address.
    pub url: String,
    /// The provider's snippet.
    pub description: String,
    /// 1-based rank.
    pub position: usize,
}

/// Why a search failed.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    /// The request did not complete.
    #[error("{provider} request failed: {message}")]
    Http {
        /// Provider name.
        provider: &'static str,
        /// The client's error.
        message: String,
    },
    /// The provider answered with an error status.
    #[error("{provider} answered HTTP {status}: {body}")]
    Status {
        /// Provider name.
        provider: &'static str,
        /// The status code.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The answer was not the documented JSON.
    #[error("{provider} answered with unexpected JSON: {message}")]
    Shape {
        /// Provider name.
        provider: &'static str,
        /// What was wrong.
        message: String,
    },
}

/// A search provider: a documented HTTP API turned into [`Hit`]s.
pub trait Provider: Send + Sync {
    /// The name used in `backend = …` (`searxng`, `brave`, …).
    fn name(&self) -> &'static str;
    /// Search for `query`, at most `limit` results.
    fn search(&self, client: &Client, query: &str, limit: usize) -> Result<Vec<Hit>, SearchError>;
}

/// Send `request` and decode its JSON answer into `T`.
pub(crate) fn send<T: serde::de::DeserializeOwned>(
    provider: &'static str,
    request: RequestBuilder,
) -> Result<T, SearchError> {
    let http = |e: reqwest::Error| SearchError::Http {
        provider,
        message: e.to_string(),
    };
    let response = request.send().map_err(http)?;
    let status = response.status();
    let text = response.text().map_err(http)?;
    if !status.is_success() {
        return Err(SearchError::Status {
            provider,
            status: status.as_u16(),
            body: text.chars().take(300).collect(),
        });
    }
    serde_json::from_str(&text).map_err(|e| SearchError::Shape {
        provider,
        message: e.to_string(),
    })
}

/// Number the hits and keep at most `limit`.
pub(crate) fn ranked(
    hits: impl IntoIterator<Item = (String, String, String)>,
    limit: usize,
) -> Vec<Hit> {
    hits.into_iter()
        .filter(|(_, url, _)| !url.is_empty())
        .take(limit)
        .enumerate()
        .map(|(i, (title, url, description))| Hit {
            title,
            url,
            description,
            position: i + 1,
        })
        .collect()
}

/// The arguments of `web_search`.
#[derive(Debug, Deserialize)]
pub struct SearchArgs {
    /// What to look for.
    query: String,
    /// How many results (1–100, default 5).
    #[serde(default)]
    limit: Option<i64>,
}

/// The model-facing schema (Hermes' parameters).
pub fn schema() -> Value {
    json!({
        "description": "Search the web. Returns up to 5 results by default, each with a title, URL and description; read a result in full with web_extract. The query goes to the configured search backend as written, so operators such as site:example.com, filetype:pdf, -term and \"exact phrase\" work where that backend supports them.",
        "parameters": {
            "type": "object",
            "properties": {
                "query": { "type": "string", "description": "What to search for (backend operators such as site:example.com allowed)" },
                "limit": { "type": "integer", "description": "Most results to return (default 5)", "minimum": 1, "maximum": 100, "default": 5 }
            },
            "required": ["query"]
        }
    })
}

/// The HTTP client used for provider APIs (the user configured these endpoints, so
/// the address policy for model-chosen URLs does not apply).
pub fn client(timeout: Duration) -> Result<Client, reqwest::Error> {
    crate::tls::client_builder()
        .timeout(timeout)
        .user_agent(concat!("toolhost-web/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Run `web_search` with `provider`.
pub fn run(args: SearchArgs, provider: &dyn Provider, client: &Client) -> ToolResult {
    let query = args.query.trim();
    if query.is_empty() {
        return Ok(json!({ "success": false, "error": "query is empty" }));
    }
    let limit = args.limit.unwrap_or(5).clamp(1, 100) as usize;
    match provider.search(client, query, limit) {
        Ok(hits) => Ok(json!({ "success": true, "data": { "web": hits } })),
        Err(e) => Ok(json!({ "success": false, "error": format!("Error searching web: {e}") })),
    }
}

#[cfg(test)]
mod tests;
