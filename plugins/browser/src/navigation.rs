//! `browser_navigate`, `browser_back` and `browser_snapshot`: moving between pages (under
//! the address policy, checked before leaving and again on the page that was reached)
//! and reading the current one.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::BrowserError;
use crate::registry::Registry;
use crate::session::Session;
use crate::snapshot::{self, Snapshot};
use crate::walker;

/// `browser_navigate` arguments.
#[derive(Debug, Deserialize)]
pub struct NavigateArgs {
    url: String,
}

/// `browser_snapshot` arguments.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct SnapshotArgs {
    full: bool,
}

/// Open `url` and answer with its title, final URL and a compact snapshot.
pub fn navigate(
    registry: &Registry,
    args: NavigateArgs,
    task: &str,
) -> Result<Value, BrowserError> {
    let url = registry.settings().policy().parse_and_resolve(&args.url)?;
    registry.with(task, true, |session| {
        let before = session.loads();
        session.guard.take_refused();
        let reply = session.page_call("Page.navigate", json!({ "url": url.as_str() }))?;
        if let Some(error) = reply["errorText"].as_str().filter(|e| !e.is_empty()) {
            let refused = session.guard.take_refused();
            if !refused.is_empty() {
                return Err(BrowserError::Refused(format!(
                    "navigation to {url} was stopped by the address policy: {}",
                    refused.join("; ")
                )));
            }
            return Err(BrowserError::Other(format!(
                "navigation to {url} failed: {error}"
            )));
        }
        session.wait_for_load(before, session.timeout);
        let mut response = landed(session)?;
        let snap = take_snapshot(session, false)?;
        response["snapshot"] = json!(snap.0);
        response["element_count"] = json!(snap.1);
        Ok(response)
    })
}

/// `{success, url, title}` for the page we are on, after re-checking its address (a
/// redirect or script may have moved it somewhere the policy refuses).
fn landed(session: &Session) -> Result<Value, BrowserError> {
    let dialogs = session.dialogs();
    if !dialogs.is_empty() {
        return Ok(json!({ "success": true, "pending_dialogs": dialogs }));
    }
    let here = session.evaluate("({ url: location.href, title: document.title })")?;
    let url = here["url"].as_str().unwrap_or_default().to_string();
    stay_allowed(session, &url)?;
    Ok(json!({ "success": true, "url": url, "title": here["title"] }))
}

/// Leave `url` (the page's address) for `about:blank` when the policy refuses it: the
/// request guard fails refused requests, but a page may still show one (a browser
/// error page for the refused address, history entries from before a setting changed).
pub fn stay_allowed(session: &Session, url: &str) -> Result<(), BrowserError> {
    if url == "about:blank" {
        return Ok(());
    }
    let refused = session.guard.take_refused();
    let verdict = match url.strip_prefix("chrome-error:") {
        // The browser's error page for a request the guard failed (or a network error).
        Some(_) if refused.is_empty() => return Ok(()),
        Some(_) => Err(format!(
            "the page tried to open an address the policy refuses, and the request was blocked: {}",
            refused.join("; ")
        )),
        None => session
            .guard
            .judge(url)
            .map_err(|refusal| format!("the page moved to {url}: {refusal}")),
    };
    if let Err(reason) = verdict {
        session.page_call("Page.navigate", json!({ "url": "about:blank" }))?;
        return Err(BrowserError::Refused(reason));
    }
    Ok(())
}

/// Go one entry back in the history.
pub fn back(registry: &Registry, _args: Value, task: &str) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        let history = session.page_call("Page.getNavigationHistory", json!({}))?;
        let current = history["currentIndex"].as_u64().unwrap_or(0);
        let Some(previous) = current
            .checked_sub(1)
            .and_then(|i| history["entries"].get(usize::try_from(i).ok()?))
        else {
            return Err(BrowserError::Other("there is no previous page".into()));
        };
        let before = session.loads();
        session.page_call(
            "Page.navigateToHistoryEntry",
            json!({ "entryId": previous["id"] }),
        )?;
        session.wait_for_load(before, Duration::from_secs(5).min(session.timeout));
        landed(session)
    })
}

/// The accessibility-tree text of the current page.
pub fn snapshot(
    registry: &Registry,
    args: SnapshotArgs,
    task: &str,
) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        let (text, count) = take_snapshot(session, args.full)?;
        let mut response = json!({ "success": true, "snapshot": text, "element_count": count });
        let dialogs = session.dialogs();
        if !dialogs.is_empty() {
            response["pending_dialogs"] = json!(dialogs);
        }
        Ok(response)
    })
}

/// Render the page and remember its refs; `(text, ref count)`.
pub fn take_snapshot(session: &mut Session, full: bool) -> Result<(String, usize), BrowserError> {
    if !session.dialogs().is_empty() {
        return Ok((
            "(a JavaScript dialog is open: answer it with browser_dialog first)".into(),
            0,
        ));
    }
    let snap = match walker::take(session, full)? {
        Some(snap) => snap,
        None => tree_snapshot(session, full)?,
    };
    let count = snap.refs.len();
    session.refs = snap.refs;
    let text = if snap.text.is_empty() {
        "(empty page)".to_string()
    } else {
        snap.text
    };
    Ok((text, count))
}

/// The snapshot rendered from `Accessibility.getFullAXTree`: the walker's fallback.
pub fn tree_snapshot(session: &Session, full: bool) -> Result<Snapshot, BrowserError> {
    let tree = session.page_call("Accessibility.getFullAXTree", json!({}))?;
    let nodes = tree["nodes"].as_array().map(Vec::as_slice).unwrap_or(&[]);
    Ok(snapshot::render(nodes, full))
}
