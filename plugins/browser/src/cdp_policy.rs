//! `browser_cdp` as a policy, not a pass-through: an allowlist of DevTools methods safe
//! for a model, with the parameters of some rewritten or checked.
//!
//! - Everything not listed is refused, naming the method and the reason: `Fetch.*` and
//!   `Target.setAutoAttach` would switch off the request guard (`guard.rs`),
//!   `Runtime.runIfWaitingForDebugger` would release a target before the guard sees it,
//!   `IO.*`, `Storage.*`, `Tracing.*` and the like reach files or other sites' data.
//! - A `url` parameter must pass the address policy (the request guard judges the
//!   request again when the browser makes it).
//! - `Browser.setDownloadBehavior` / `Page.setDownloadBehavior` always save into the
//!   task's download folder (`downloads.rs`), whatever path is asked for.
//! - `DOM.setFileInputFiles` only with workspace files that are not secret
//!   (`uploads.rs`).
//!
//! docs/hermes/browser.md, "browser_cdp", lists the methods.

use std::path::Path;

use serde_json::{Value, json};

use crate::downloads;
use crate::error::BrowserError;
use crate::guard::Guard;
use crate::settings::Settings;

/// The methods `browser_cdp` passes on (with [`prepare`]'s checks).
pub const ALLOWED: [&str; 54] = [
    "Accessibility.getFullAXTree",
    "Accessibility.getPartialAXTree",
    "Accessibility.queryAXTree",
    "Browser.getVersion",
    "Browser.setDownloadBehavior",
    "DOM.describeNode",
    "DOM.focus",
    "DOM.getAttributes",
    "DOM.getBoxModel",
    "DOM.getContentQuads",
    "DOM.getDocument",
    "DOM.getOuterHTML",
    "DOM.querySelector",
    "DOM.querySelectorAll",
    "DOM.removeAttribute",
    "DOM.requestNode",
    "DOM.resolveNode",
    "DOM.scrollIntoViewIfNeeded",
    "DOM.setAttributeValue",
    "DOM.setFileInputFiles",
    "Emulation.clearDeviceMetricsOverride",
    "Emulation.setDeviceMetricsOverride",
    "Emulation.setEmulatedMedia",
    "Emulation.setUserAgentOverride",
    "Input.dispatchKeyEvent",
    "Input.dispatchMouseEvent",
    "Input.dispatchTouchEvent",
    "Input.insertText",
    "Network.getCookies",
    "Page.bringToFront",
    "Page.captureScreenshot",
    "Page.getFrameTree",
    "Page.getLayoutMetrics",
    "Page.getNavigationHistory",
    "Page.handleJavaScriptDialog",
    "Page.navigate",
    "Page.navigateToHistoryEntry",
    "Page.printToPDF",
    "Page.reload",
    "Page.resetNavigationHistory",
    "Page.setDownloadBehavior",
    "Page.stopLoading",
    "Runtime.awaitPromise",
    "Runtime.callFunctionOn",
    "Runtime.compileScript",
    "Runtime.evaluate",
    "Runtime.getProperties",
    "Runtime.globalLexicalScopeNames",
    "Runtime.releaseObject",
    "Runtime.releaseObjectGroup",
    "Runtime.runScript",
    "Target.activateTarget",
    "Target.getTargetInfo",
    "Target.getTargets",
];

/// Why a method off the allowlist is refused.
fn denial(method: &str) -> &'static str {
    let domain = method.split('.').next().unwrap_or_default();
    match (domain, method) {
        ("Fetch", _) | (_, "Target.setAutoAttach" | "Target.setDiscoverTargets") => {
            "it would change the request guard that applies the address policy to every request"
        }
        (_, "Runtime.runIfWaitingForDebugger") => {
            "it would release a target before the request guard is in place"
        }
        ("Target", _) => "it would create, attach to or expose targets outside the guarded page",
        ("IO" | "Storage" | "Tracing" | "HeapProfiler" | "Memory" | "SystemInfo", _) => {
            "it reads files, other sites' data or the browser's process"
        }
        ("Browser", _) => "it changes the browser itself (permissions, windows, lifetime)",
        ("Security", _) => "it would switch off certificate checks",
        _ => "it is not on browser_cdp's allowlist of methods safe for a model",
    }
}

/// A method call cleared to go: what to send and where.
#[derive(Debug)]
pub struct Prepared {
    /// The method sent (a download setting is always sent as `Browser.…`).
    pub method: String,
    /// Its parameters, after rewriting.
    pub params: Value,
    /// Send at browser level even when a target was named.
    pub browser_level: bool,
}

/// Check `method` and `params` against the policy; what to send, or why not.
pub fn prepare(
    settings: &Settings,
    guard: &Guard,
    downloads: &Path,
    method: &str,
    mut params: Value,
) -> Result<Prepared, BrowserError> {
    if !ALLOWED.contains(&method) {
        return Err(BrowserError::CdpDenied {
            method: method.to_string(),
            reason: denial(method).to_string(),
        });
    }
    if let Some(url) = params.get("url").and_then(Value::as_str) {
        guard.judge(url)?;
    }
    match method {
        "Browser.setDownloadBehavior" | "Page.setDownloadBehavior" => {
            let asked = params.get("behavior").and_then(Value::as_str);
            return Ok(Prepared {
                method: "Browser.setDownloadBehavior".into(),
                params: downloads::behavior(downloads::forced_behavior(asked), downloads),
                browser_level: true,
            });
        }
        "DOM.setFileInputFiles" => {
            let files: Vec<String> = params
                .get("files")
                .and_then(Value::as_array)
                .map(|f| {
                    f.iter()
                        .map(|p| p.as_str().map(str::to_string))
                        .collect::<Option<Vec<String>>>()
                })
                .unwrap_or_default()
                .ok_or_else(|| BrowserError::CdpDenied {
                    method: method.to_string(),
                    reason: "'files' must be a list of paths".into(),
                })?;
            params["files"] = json!(crate::uploads::check(settings, &files)?);
        }
        _ => {}
    }
    Ok(Prepared {
        method: method.to_string(),
        params,
        browser_level: false,
    })
}
