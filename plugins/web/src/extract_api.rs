//! Provider extract APIs for `web_extract`, as Hermes offers them: with
//! `extract_backend = "firecrawl" | "tavily" | "exa" | "parallel"` in
//! `[plugins.config.web]`, pages are read by that provider's API instead of being
//! fetched and converted here (useful for pages that need JavaScript or block plain
//! clients). The provider's text then gets the same character window and spill file as
//! a local conversion. Without `extract_backend` (or with `"local"`), pages are fetched
//! locally; a provider is never chosen just because its key is present, since local
//! extraction costs nothing.
//!
//! - Firecrawl: `POST /v2/scrape` `{"url", "formats": ["markdown"]}` per URL, bearer
//!   key (optional for a self-hosted `FIRECRAWL_API_URL`); `data.markdown`,
//!   `data.metadata.title`.
//! - Tavily: `POST /extract` `{"urls", "include_images": false}`, bearer key;
//!   `results[{url, raw_content}]`, `failed_results[{url, error}]`.
//! - Exa: `POST /contents` `{"urls", "text": true}`, key in `x-api-key`;
//!   `results[{url, title, text}]`.
//! - Parallel: `POST /v1beta/extract` `{"urls", "full_content": true}`, key in
//!   `x-api-key` with the beta header; `results[{url, title, full_content}]`,
//!   `errors[{url, content}]`.

use reqwest::blocking::Client;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::search::{SearchError, send};

/// One page as a provider returned it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Page {
    /// The URL asked for.
    pub url: String,
    /// Its title.
    pub title: String,
    /// Its text (Markdown where the provider gives it).
    pub content: String,
    /// Why it could not be read.
    pub error: Option<String>,
}

/// A configured provider.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExtractApi {
    /// `firecrawl`, `tavily`, `exa` or `parallel`.
    pub name: String,
    /// The API root.
    pub base_url: String,
    /// The key (empty for a self-hosted Firecrawl).
    pub key: String,
}

/// Why the configured provider cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ExtractApiError {
    /// `extract_backend` names no known provider.
    #[error("unknown web extract backend {0:?} (use local, firecrawl, tavily, exa or parallel)")]
    Unknown(String),
    /// Its key is missing.
    #[error("web extract backend {backend} needs {needs}")]
    Missing {
        /// The provider.
        backend: String,
        /// What to set.
        needs: String,
    },
}

/// The provider `backend` names (`None`: extract locally), its base URL from
/// `base_url` or the provider's default, its key from `env`.
pub fn choose(
    backend: Option<&str>,
    base_url: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<ExtractApi>, ExtractApiError> {
    let name = match backend.map(|b| b.trim().to_ascii_lowercase()) {
        None => return Ok(None),
        Some(name) if name.is_empty() || name == "local" => return Ok(None),
        Some(name) => name,
    };
    let present = |var: &str| env(var).filter(|v| !v.trim().is_empty());
    let (default_url, key_var) = match name.as_str() {
        "firecrawl" => ("https://api.firecrawl.dev", "FIRECRAWL_API_KEY"),
        "tavily" => ("https://api.tavily.com", "TAVILY_API_KEY"),
        "exa" => ("https://api.exa.ai", "EXA_API_KEY"),
        "parallel" => ("https://api.parallel.ai", "PARALLEL_API_KEY"),
        _ => return Err(ExtractApiError::Unknown(name)),
    };
    let self_hosted = (name == "firecrawl")
        .then(|| present("FIRECRAWL_API_URL"))
        .flatten();
    let key = match present(key_var) {
        Some(key) => key,
        None if self_hosted.is_some() => String::new(),
        None => {
            return Err(ExtractApiError::Missing {
                backend: name,
                needs: key_var.to_string(),
            });
        }
    };
    let base_url = base_url
        .map(str::to_string)
        .or(self_hosted)
        .unwrap_or_else(|| default_url.to_string());
    Ok(Some(ExtractApi {
        name,
        base_url: base_url.trim_end_matches('/').to_string(),
        key,
    }))
}

impl ExtractApi {
    /// Read `urls` (in order; one [`Page`] per URL).
    pub fn extract(&self, client: &Client, urls: &[String]) -> Vec<Page> {
        let result = match self.name.as_str() {
            "firecrawl" => return urls.iter().map(|u| self.firecrawl(client, u)).collect(),
            "tavily" => self.tavily(client, urls),
            "exa" => self.exa(client, urls),
            _ => self.parallel(client, urls),
        };
        match result {
            Ok(pages) => in_order(urls, pages),
            Err(err) => urls
                .iter()
                .map(|url| Page {
                    url: url.clone(),
                    error: Some(err.to_string()),
                    ..Page::default()
                })
                .collect(),
        }
    }

    fn firecrawl(&self, client: &Client, url: &str) -> Page {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            data: Option<Data>,
            #[serde(default)]
            error: Option<String>,
        }
        #[derive(Deserialize)]
        struct Data {
            #[serde(default)]
            markdown: Option<String>,
            #[serde(default)]
            metadata: Value,
        }
        let mut request = client
            .post(format!("{}/v2/scrape", self.base_url))
            .json(&json!({ "url": url, "formats": ["markdown"] }));
        if !self.key.is_empty() {
            request = request.bearer_auth(&self.key);
        }
        let mut page = Page {
            url: url.to_string(),
            ..Page::default()
        };
        match send::<Answer>("firecrawl", request) {
            Ok(Answer {
                data: Some(data), ..
            }) => {
                page.title = data.metadata["title"].as_str().unwrap_or_default().into();
                page.content = data.markdown.unwrap_or_default();
            }
            Ok(Answer { error, .. }) => {
                page.error = Some(error.unwrap_or_else(|| "firecrawl returned no page".into()));
            }
            Err(err) => page.error = Some(err.to_string()),
        }
        page
    }

    fn tavily(&self, client: &Client, urls: &[String]) -> Result<Vec<Page>, SearchError> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            results: Vec<Item>,
            #[serde(default)]
            failed_results: Vec<Failed>,
        }
        #[derive(Deserialize)]
        struct Item {
            #[serde(default)]
            url: String,
            #[serde(default)]
            title: Option<String>,
            #[serde(default)]
            raw_content: Option<String>,
        }
        #[derive(Deserialize)]
        struct Failed {
            #[serde(default)]
            url: String,
            #[serde(default)]
            error: Option<String>,
        }
        let request = client
            .post(format!("{}/extract", self.base_url))
            .bearer_auth(&self.key)
            .json(&json!({ "urls": urls, "include_images": false }));
        let answer: Answer = send("tavily", request)?;
        let mut pages: Vec<Page> = answer
            .results
            .into_iter()
            .map(|i| Page {
                url: i.url,
                title: i.title.unwrap_or_default(),
                content: i.raw_content.unwrap_or_default(),
                error: None,
            })
            .collect();
        pages.extend(answer.failed_results.into_iter().map(|f| Page {
            url: f.url,
            error: Some(f.error.unwrap_or_else(|| "tavily could not read it".into())),
            ..Page::default()
        }));
        Ok(pages)
    }

    fn exa(&self, client: &Client, urls: &[String]) -> Result<Vec<Page>, SearchError> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            results: Vec<Item>,
        }
        #[derive(Deserialize)]
        struct Item {
            #[serde(default)]
            url: String,
            #[serde(default)]
            title: Option<String>,
            #[serde(default)]
            text: Option<String>,
        }
        let request = client
            .post(format!("{}/contents", self.base_url))
            .header("x-api-key", &self.key)
            .json(&json!({ "urls": urls, "text": true }));
        let answer: Answer = send("exa", request)?;
        Ok(answer
            .results
            .into_iter()
            .map(|i| Page {
                url: i.url,
                title: i.title.unwrap_or_default(),
                content: i.text.unwrap_or_default(),
                error: None,
            })
            .collect())
    }

    fn parallel(&self, client: &Client, urls: &[String]) -> Result<Vec<Page>, SearchError> {
        #[derive(Deserialize)]
        struct Answer {
            #[serde(default)]
            results: Vec<Item>,
            #[serde(default)]
            errors: Vec<Value>,
        }
        #[derive(Deserialize)]
        struct Item {
            #[serde(default)]
            url: String,
            #[serde(default)]
            title: Option<String>,
            #[serde(default)]
            full_content: Option<String>,
            #[serde(default)]
            excerpts: Vec<String>,
        }
        let request = client
            .post(format!("{}/v1beta/extract", self.base_url))
            .header("x-api-key", &self.key)
            .header("parallel-beta", "search-extract-2025-10-10")
            .json(&json!({ "urls": urls, "full_content": true, "excerpts": false }));
        let answer: Answer = send("parallel", request)?;
        let mut pages: Vec<Page> = answer
            .results
            .into_iter()
            .map(|i| Page {
                url: i.url,
                title: i.title.unwrap_or_default(),
                content: i.full_content.unwrap_or_else(|| i.excerpts.join("\n\n")),
                error: None,
            })
            .collect();
        pages.extend(answer.errors.into_iter().map(|e| {
            Page {
                url: e["url"].as_str().unwrap_or_default().to_string(),
                error: Some(
                    e["content"]
                        .as_str()
                        .or_else(|| e["error_type"].as_str())
                        .unwrap_or("parallel could not read it")
                        .to_string(),
                ),
                ..Page::default()
            }
        }));
        Ok(pages)
    }
}

/// One page per asked URL, in the asked order (providers may reorder or drop).
fn in_order(urls: &[String], mut pages: Vec<Page>) -> Vec<Page> {
    urls.iter()
        .map(|url| match pages.iter().position(|p| &p.url == url) {
            Some(i) => pages.swap_remove(i),
            None => Page {
                url: url.clone(),
                error: Some("the provider returned nothing for this URL".into()),
                ..Page::default()
            },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_server::{Response, Server};

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn the_backend_is_chosen_only_when_named() {
        let keys = env(&[
            ("TAVILY_API_KEY", "tv"),
            ("FIRECRAWL_API_URL", "http://fc:3002/"),
        ]);
        /// (configured backend, expected (provider, key, endpoint) or error).
        type Case<'a> = (
            Option<&'a str>,
            Result<Option<(&'a str, &'a str, &'a str)>, ExtractApiError>,
        );
        let cases: [Case; 6] = [
            (None, Ok(None)),
            (Some("local"), Ok(None)),
            (
                Some("Tavily"),
                Ok(Some(("tavily", "https://api.tavily.com", "tv"))),
            ),
            (
                Some("firecrawl"),
                Ok(Some(("firecrawl", "http://fc:3002", ""))),
            ),
            (
                Some("exa"),
                Err(ExtractApiError::Missing {
                    backend: "exa".into(),
                    needs: "EXA_API_KEY".into(),
                }),
            ),
            (Some("bing"), Err(ExtractApiError::Unknown("bing".into()))),
        ];
        for (backend, want) in cases {
            let got =
                choose(backend, None, &keys).map(|api| api.map(|a| (a.name, a.base_url, a.key)));
            let want =
                want.map(|api| api.map(|(n, u, k)| (n.to_string(), u.to_string(), k.to_string())));
            assert_eq!(got, want, "{backend:?}");
        }
    }

    fn api(name: &str, server: &Server) -> ExtractApi {
        ExtractApi {
            name: name.into(),
            base_url: server.base.clone(),
            key: "k-123".into(),
        }
    }

    fn urls() -> Vec<String> {
        vec!["https://a.example/".into(), "https://b.example/".into()]
    }

    #[test]
    fn firecrawl_scrapes_each_url_as_markdown() {
        let server = Server::start(|req| {
            let url = req.json()["url"].as_str().unwrap_or_default().to_string();
            if url.contains("b.example") {
                return Response::json(json!({"success": false, "error": "blocked"}));
            }
            Response::json(json!({"success": true, "data": {
                "markdown": "# A\n\nbody", "metadata": {"title": "Page A", "sourceURL": url}}}))
        });
        let pages = api("firecrawl", &server)
            .extract(&crate::tls::client_builder().build().unwrap(), &urls());
        assert_eq!(pages[0].title, "Page A");
        assert_eq!(pages[0].content, "# A\n\nbody");
        assert_eq!(pages[1].error.as_deref(), Some("blocked"));
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests[0].path, "/v2/scrape");
        assert_eq!(requests[0].header("authorization"), Some("Bearer k-123"));
        assert_eq!(requests[0].json()["formats"], json!(["markdown"]));
    }

    #[test]
    fn tavily_extracts_in_one_request_and_reports_failures() {
        let server = Server::start(|_| {
            Response::json(json!({
                "results": [{"url": "https://b.example/", "raw_content": "B text"}],
                "failed_results": [{"url": "https://a.example/", "error": "timeout"}]}))
        });
        let pages =
            api("tavily", &server).extract(&crate::tls::client_builder().build().unwrap(), &urls());
        assert_eq!(pages[0].url, "https://a.example/");
        assert_eq!(pages[0].error.as_deref(), Some("timeout"));
        assert_eq!(pages[1].content, "B text");
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests.len(), 1);
        assert_eq!(requests[0].path, "/extract");
        assert_eq!(requests[0].json()["urls"], json!(urls()));
    }

    #[test]
    fn exa_reads_contents_with_its_key_header() {
        let server = Server::start(|_| {
            Response::json(json!({"results": [
                {"url": "https://a.example/", "title": "A", "text": "A text"},
                {"url": "https://b.example/", "title": "B", "text": "B text"}]}))
        });
        let pages =
            api("exa", &server).extract(&crate::tls::client_builder().build().unwrap(), &urls());
        assert_eq!(
            pages.iter().map(|p| p.content.as_str()).collect::<Vec<_>>(),
            ["A text", "B text"]
        );
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests[0].path, "/contents");
        assert_eq!(requests[0].header("x-api-key"), Some("k-123"));
        assert_eq!(requests[0].json()["text"], true);
    }

    #[test]
    fn parallel_extracts_full_content_and_names_missing_pages() {
        let server = Server::start(|_| {
            Response::json(json!({"results": [
                {"url": "https://a.example/", "title": "A", "full_content": "A full"}],
                "errors": []}))
        });
        let pages = api("parallel", &server)
            .extract(&crate::tls::client_builder().build().unwrap(), &urls());
        assert_eq!(pages[0].content, "A full");
        assert!(
            pages[1]
                .error
                .as_deref()
                .unwrap()
                .contains("returned nothing")
        );
        let requests = server.requests.lock().unwrap();
        assert_eq!(requests[0].path, "/v1beta/extract");
        assert!(requests[0].header("parallel-beta").is_some());
    }

    #[test]
    fn an_http_error_becomes_each_pages_error() {
        let server =
            Server::start(|_| Response::new(401, "application/json", "{\"error\":\"bad key\"}"));
        let pages =
            api("tavily", &server).extract(&crate::tls::client_builder().build().unwrap(), &urls());
        assert!(
            pages
                .iter()
                .all(|p| p.error.as_deref().is_some_and(|e| e.contains("401")))
        );
    }
}
