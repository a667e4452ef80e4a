//! The request guard: every request the browser makes — a navigation the model asked
//! for, a link, a form, a redirect hop, a script's `location.href = …` or `fetch()`, an
//! image, a popup's, an iframe's — is paused by the DevTools `Fetch` domain and judged
//! by the address policy (`toolhost-netpolicy`) before it may continue.
//!
//! The browser is told to auto-attach to every target (pages, popups, out-of-process
//! iframes, workers) and to hold each new target until we release it; on
//! `Target.attachedToTarget` the guard enables `Fetch` on the new session (and
//! auto-attach below it), then releases it. `Fetch.requestPaused` is answered with
//! `Fetch.continueRequest` or `Fetch.failRequest` (`BlockedByClient`). The guard runs
//! on its own thread, so a DNS lookup never stalls the connection's I/O thread; it
//! ends when the connection does. docs/hermes/browser.md, "Address policy".

use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError, RwLock, RwLockReadGuard};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost_netpolicy::{Policy, Refusal};

use crate::cdp::Link;
use crate::error::BrowserError;

/// One event the guard handles: `(method, params, session id)`.
pub type GuardEvent = (String, Value, Option<String>);

/// The methods the guard wants to see.
pub fn wants(method: &str) -> bool {
    matches!(method, "Fetch.requestPaused" | "Target.attachedToTarget")
}

/// The auto-attach parameters: every new target waits for us before it runs.
pub fn auto_attach() -> Value {
    json!({ "autoAttach": true, "waitForDebuggerOnStart": true, "flatten": true })
}

/// How many refused requests [`Guard`] remembers.
const REMEMBERED: usize = 16;

/// The guard's state, shared by the session and the guard's thread.
#[derive(Debug, Default)]
pub struct Guard {
    policy: RwLock<Policy>,
    /// The latest refused requests, `"<url>: <why>"`, oldest first.
    refused: Mutex<Vec<String>>,
}

/// One browser's guard.
pub type SharedGuard = Arc<Guard>;

impl Guard {
    /// A guard applying `policy`.
    pub fn new(policy: Policy) -> SharedGuard {
        Arc::new(Guard {
            policy: RwLock::new(policy),
            refused: Mutex::default(),
        })
    }

    /// The policy as it is now (a poisoned lock still holds a whole policy: plain data).
    pub fn policy(&self) -> RwLockReadGuard<'_, Policy> {
        self.policy.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Switch private networks on or off.
    #[cfg(test)]
    pub fn set_allow_private(&self, allow: bool) {
        self.policy
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .allow_private = allow;
    }

    /// Judge `url` by the current policy ([`judge`]).
    pub fn judge(&self, url: &str) -> Result<(), Refusal> {
        judge(&self.policy(), url)
    }

    fn remember(&self, url: &str, refusal: &Refusal) {
        let mut refused = self.refused.lock().unwrap_or_else(PoisonError::into_inner);
        if refused.len() == REMEMBERED {
            refused.remove(0);
        }
        refused.push(format!("{url}: {refusal}"));
    }

    /// The refused requests since the last call (and forget them).
    pub fn take_refused(&self) -> Vec<String> {
        std::mem::take(&mut *self.refused.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// Judge a URL the browser is about to request: `http(s)` by the policy (with a DNS
/// lookup); `data:`, `blob:` and `about:` stay inside the browser; anything else is
/// refused.
pub fn judge(policy: &Policy, raw: &str) -> Result<(), Refusal> {
    let scheme = raw
        .split(':')
        .next()
        .unwrap_or_default()
        .to_ascii_lowercase();
    if matches!(scheme.as_str(), "data" | "blob" | "about") {
        return Ok(());
    }
    policy.parse_and_resolve(raw).map(drop)
}

/// Start the guard's thread; it ends when `events` closes (the connection's I/O thread
/// holds the sender).
pub fn start(link: Link, guard: SharedGuard, events: Receiver<GuardEvent>, timeout: Duration) {
    let _ = std::thread::Builder::new()
        .name("toolhost-browser-guard".into())
        .spawn(move || {
            for (method, params, session) in events {
                let handled = match method.as_str() {
                    "Target.attachedToTarget" => attached(&link, &params, timeout),
                    _ => paused(&link, &guard, &params, session.as_deref(), timeout),
                };
                if matches!(handled, Err(BrowserError::Closed)) {
                    return;
                }
            }
        });
}

/// A new target: intercept its requests and its children's, then let it run (a target
/// the browser already had, not waiting, ignores the release).
fn attached(link: &Link, params: &Value, timeout: Duration) -> Result<(), BrowserError> {
    let Some(session) = params["sessionId"].as_str() else {
        return Ok(());
    };
    let session = Some(session);
    let client = link.client()?;
    let fetch = json!({ "patterns": [{ "urlPattern": "*", "requestStage": "Request" }] });
    // A target without these domains (a worker, the browser's own UI) answers with an
    // error; it is released all the same.
    let _ = client.call("Fetch.enable", fetch, session, timeout);
    let _ = client.call("Target.setAutoAttach", auto_attach(), session, timeout);
    // Not waited for: the answer comes only once the target has run, and the guard
    // must keep answering paused requests meanwhile.
    client
        .send("Runtime.runIfWaitingForDebugger", json!({}), session)
        .map(drop)
}

/// A paused request: continue it or fail it.
fn paused(
    link: &Link,
    guard: &Guard,
    params: &Value,
    session: Option<&str>,
    timeout: Duration,
) -> Result<(), BrowserError> {
    let Some(id) = params["requestId"].as_str() else {
        return Ok(());
    };
    let url = params["request"]["url"].as_str().unwrap_or_default();
    let (method, reply) = match guard.judge(url) {
        Ok(()) => ("Fetch.continueRequest", json!({ "requestId": id })),
        Err(refusal) => {
            guard.remember(url, &refusal);
            (
                "Fetch.failRequest",
                json!({ "requestId": id, "errorReason": "BlockedByClient" }),
            )
        }
    };
    match link.client()?.call(method, reply, session, timeout) {
        // The request may be gone already (the page navigated away).
        Err(BrowserError::Cdp { .. } | BrowserError::Timeout { .. }) => Ok(()),
        other => other.map(drop),
    }
}

/// A sink forwarding the guard's events to it.
pub fn forward(tx: &Sender<GuardEvent>, method: &str, params: &Value, session: Option<&str>) {
    let _ = tx.send((
        method.to_string(),
        params.clone(),
        session.map(str::to_string),
    ));
}
