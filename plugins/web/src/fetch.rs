//! Fetching one URL for `web_extract`: bounded redirects, a size cap, a timeout, and
//! the address policy ([`toolhost_netpolicy::Policy`]) on every hop.
//!
//! Redirects are followed here, not by the HTTP client, so each hop's URL is judged
//! before it is requested; its host name is judged again by the client's resolver.

use std::io::Read;
use std::time::Duration;

use reqwest::blocking::Client;
use reqwest::header::{CONTENT_TYPE, LOCATION};

use toolhost_netpolicy::{PolicyResolver, Refusal};

use crate::settings::Settings;

/// Why a fetch failed.
#[derive(Debug, thiserror::Error)]
pub enum FetchError {
    /// Not a URL.
    #[error("invalid URL {url}: {source}")]
    BadUrl {
        /// The text given.
        url: String,
        /// The parser's complaint.
        source: url::ParseError,
    },
    /// The address policy refused a hop.
    #[error("Blocked: {0}")]
    Refused(#[from] Refusal),
    /// The client could not be built or the request failed (DNS, connect, TLS, timeout).
    #[error("request failed: {0}")]
    Http(String),
    /// The server answered with an error status.
    #[error("HTTP {0}")]
    Status(u16),
    /// More redirects than allowed.
    #[error("too many redirects (more than {0})")]
    TooManyRedirects(usize),
    /// A redirect without a usable `Location`.
    #[error("redirect without a valid Location header")]
    BadRedirect,
    /// The body is larger than the cap.
    #[error("response larger than {0} bytes")]
    TooLarge(u64),
    /// Reading the body failed.
    #[error("reading the response failed: {0}")]
    Read(#[from] std::io::Error),
}

/// A fetched response: the final URL, its media type (lower case, no parameters) and
/// the body.
#[derive(Debug)]
pub struct Fetched {
    /// The URL after redirects.
    pub url: url::Url,
    /// `text/html`, `application/pdf`, … (empty when the server sent none).
    pub media_type: String,
    /// The body, at most the size cap.
    pub body: Vec<u8>,
}

/// The HTTP client of the plugin: no automatic redirects, the policy resolver, the
/// configured timeout.
pub fn client(settings: &Settings) -> Result<Client, FetchError> {
    crate::tls::client_builder()
        .redirect(reqwest::redirect::Policy::none())
        // A proxy would resolve names itself, past the policy resolver.
        .no_proxy()
        .dns_resolver(std::sync::Arc::new(PolicyResolver(std::sync::Arc::new(
            settings.policy(),
        ))))
        .timeout(Duration::from_secs(settings.timeout_secs))
        .user_agent(concat!("toolhost-web/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| FetchError::Http(e.to_string()))
}

/// Fetch `url`, following at most `settings.max_redirects` redirects.
pub fn fetch(client: &Client, settings: &Settings, url: &str) -> Result<Fetched, FetchError> {
    let policy = settings.policy();
    let mut current = url::Url::parse(url).map_err(|source| FetchError::BadUrl {
        url: url.to_string(),
        source,
    })?;
    for _ in 0..=settings.max_redirects {
        policy.check_url(&current)?;
        let response = client
            .get(current.clone())
            .header(
                "Accept",
                "text/html,application/xhtml+xml,application/pdf,text/*;q=0.8,*/*;q=0.5",
            )
            .send()
            .map_err(|e| http_error(&e))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .ok_or(FetchError::BadRedirect)?;
            current = current
                .join(location)
                .map_err(|_| FetchError::BadRedirect)?;
            continue;
        }
        if !status.is_success() {
            return Err(FetchError::Status(status.as_u16()));
        }
        let media_type = response
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .split(';')
            .next()
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        let cap = settings.max_bytes;
        if response.content_length().is_some_and(|n| n > cap) {
            return Err(FetchError::TooLarge(cap));
        }
        let mut body = Vec::new();
        response.take(cap + 1).read_to_end(&mut body)?;
        if body.len() as u64 > cap {
            return Err(FetchError::TooLarge(cap));
        }
        return Ok(Fetched {
            url: current,
            media_type,
            body,
        });
    }
    Err(FetchError::TooManyRedirects(settings.max_redirects))
}

/// The request error with its cause chain (a policy refusal from the resolver is
/// buried a few levels down; the model should see it).
fn http_error(error: &reqwest::Error) -> FetchError {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(cause) = source {
        if let Some(refusal) = cause.downcast_ref::<Refusal>() {
            return FetchError::Refused(refusal.clone());
        }
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    FetchError::Http(text)
}
