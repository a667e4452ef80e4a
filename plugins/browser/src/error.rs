//! [`BrowserError`]: why a browser operation failed, with enough context for the model to
//! react (which CDP method, which ref, which address).

use thiserror::Error;

/// A failed browser operation.
#[derive(Debug, Error)]
pub enum BrowserError {
    /// No Chromium binary and no `cdp_url`.
    #[error(
        "no Chromium found: install the `chromium` package, set `chromium = \"/path\"` or `cdp_url` in [plugins.config.browser], or TOOLHOST_CHROMIUM"
    )]
    NoChromium,
    /// Starting the browser process failed.
    #[error("could not start Chromium ({path}): {source}")]
    Launch {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The browser did not announce its DevTools endpoint in time.
    #[error("Chromium did not open its DevTools endpoint within {0} s")]
    NoEndpoint(u64),
    /// The websocket to the DevTools endpoint failed.
    #[error("DevTools connection to {url} failed: {source}")]
    Connect {
        url: String,
        #[source]
        source: Box<tungstenite::Error>,
    },
    /// `cdp_ca_file` could not be used.
    #[error("cdp_ca_file {path}: {message}")]
    CaFile { path: String, message: String },
    /// The connection closed (the browser exited or the remote endpoint went away).
    #[error("the browser connection is closed")]
    Closed,
    /// A CDP method answered with an error.
    #[error("CDP {method} failed: {message}")]
    Cdp { method: String, message: String },
    /// A CDP method did not answer in time.
    #[error("CDP {method} timed out after {secs} s")]
    Timeout { method: String, secs: u64 },
    /// The address policy refused a URL.
    #[error("Blocked: {0}")]
    Policy(#[from] toolhost_netpolicy::Refusal),
    /// A policy refused something else (the page moved, an upload).
    #[error("Blocked: {0}")]
    Refused(String),
    /// `browser_cdp` refused a method.
    #[error("Blocked: browser_cdp does not allow {method}: {reason}")]
    CdpDenied { method: String, reason: String },
    /// A ref not in the last snapshot.
    #[error("unknown element ref {0:?}: take a browser_snapshot and use one of its refs")]
    UnknownRef(String),
    /// A ref from a snapshot of a page that has since gone (navigated or re-rendered).
    #[error(
        "element ref {0:?} is no longer on the page (it changed since the snapshot): take a new browser_snapshot"
    )]
    StaleRef(String),
    /// Anything else, described.
    #[error("{0}")]
    Other(String),
}

impl From<std::io::Error> for BrowserError {
    fn from(e: std::io::Error) -> Self {
        BrowserError::Other(e.to_string())
    }
}
