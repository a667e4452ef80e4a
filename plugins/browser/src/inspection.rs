//! `browser_get_images`, `browser_console`, `browser_dialog`, `browser_cdp` and
//! `browser_vision`: reading what the page holds or reported, answering its dialogs,
//! and raw protocol access.

use std::path::PathBuf;
use std::time::Duration;

use base64::Engine;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::cdp_policy;
use crate::error::BrowserError;
use crate::registry::Registry;
use crate::vision::Access;

/// `browser_console` arguments.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ConsoleArgs {
    clear: bool,
    expression: Option<String>,
}

/// `browser_dialog` arguments.
#[derive(Debug, Deserialize)]
pub struct DialogArgs {
    action: String,
    prompt_text: Option<String>,
    dialog_id: Option<String>,
}

/// `browser_cdp` arguments.
#[derive(Debug, Deserialize)]
pub struct CdpArgs {
    method: String,
    #[serde(default)]
    params: Option<Value>,
    target_id: Option<String>,
    frame_id: Option<String>,
    timeout: Option<f64>,
}

/// `browser_vision` arguments.
#[derive(Debug, Deserialize)]
pub struct VisionArgs {
    question: String,
    #[serde(default)]
    annotate: bool,
}

const IMAGES_JS: &str = "Array.from(document.images).map(i => ({ src: i.currentSrc || i.src, alt: i.alt || '', width: i.naturalWidth, height: i.naturalHeight })).filter(i => i.src && !i.src.startsWith('data:'))";

/// The page's images.
pub fn images(registry: &Registry, _args: Value, task: &str) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        let images = session.evaluate(IMAGES_JS)?;
        let count = images.as_array().map_or(0, Vec::len);
        Ok(json!({ "success": true, "images": images, "count": count }))
    })
}

/// Console messages and uncaught errors, or the value of `expression`.
pub fn console(registry: &Registry, args: ConsoleArgs, task: &str) -> Result<Value, BrowserError> {
    registry.with(task, false, |session| {
        if let Some(expression) = args.expression.as_deref() {
            session.guard.take_refused();
            let result = session.evaluate(expression)?;
            landed_check(session)?;
            return Ok(json!({ "success": true, "result": result }));
        }
        let mut events = session
            .events
            .lock()
            .map_err(|_| BrowserError::Other("event buffer poisoned".into()))?;
        let messages = if args.clear {
            std::mem::take(&mut events.console)
        } else {
            events.console.clone()
        };
        let errors = if args.clear {
            std::mem::take(&mut events.errors)
        } else {
            events.errors.clone()
        };
        Ok(json!({
            "success": true,
            "console_messages": messages,
            "js_errors": errors,
            "total_messages": messages.len(),
            "total_errors": errors.len(),
        }))
    })
}

/// A script may have navigated the page: refuse to stay on an address the policy forbids.
fn landed_check(session: &crate::session::Session) -> Result<(), BrowserError> {
    std::thread::sleep(Duration::from_millis(50));
    let url = session.evaluate("location.href")?;
    crate::navigation::stay_allowed(session, url.as_str().unwrap_or("about:blank"))
}

/// Accept or dismiss the open dialog.
pub fn dialog(registry: &Registry, args: DialogArgs, task: &str) -> Result<Value, BrowserError> {
    let accept = match args.action.as_str() {
        "accept" => true,
        "dismiss" => false,
        other => {
            return Err(BrowserError::Other(format!(
                "action must be 'accept' or 'dismiss', not {other:?}"
            )));
        }
    };
    registry.with(task, false, |session| {
        let dialogs = session.dialogs();
        let Some(open) = dialogs.first() else {
            return Err(BrowserError::Other("no JavaScript dialog is open".into()));
        };
        if let Some(id) = &args.dialog_id
            && open["id"].as_str() != Some(id)
        {
            return Err(BrowserError::Other(format!(
                "dialog {id} is not the open one ({})",
                open["id"]
            )));
        }
        let mut params = json!({ "accept": accept });
        if let Some(text) = &args.prompt_text {
            params["promptText"] = json!(text);
        }
        session.page_call("Page.handleJavaScriptDialog", params)?;
        Ok(json!({ "success": true, "action": args.action, "dialog": open }))
    })
}

/// A CDP call, browser-level or on a target, if `cdp_policy.rs` allows it (with its
/// parameters checked or rewritten there).
pub fn cdp(registry: &Registry, args: CdpArgs, task: &str) -> Result<Value, BrowserError> {
    if args.frame_id.is_some() {
        return Err(BrowserError::Other(
            "frame_id is not supported: use target_id, or Runtime.evaluate through the parent page"
                .into(),
        ));
    }
    let params = args.params.unwrap_or_else(|| json!({}));
    let secs = args.timeout.unwrap_or(30.0).clamp(1.0, 300.0);
    let timeout = Duration::from_secs_f64(secs);
    registry.with(task, true, |session| {
        let call = cdp_policy::prepare(
            registry.settings(),
            &session.guard,
            &session.downloads,
            &args.method,
            params,
        )?;
        let session_id = match args.target_id.as_deref() {
            _ if call.browser_level => None,
            None => None,
            Some(target) if target == session.target => Some(session.page.clone()),
            Some(target) => {
                let attached = session.raw_call(
                    "Target.attachToTarget",
                    json!({ "targetId": target, "flatten": true }),
                    None,
                    session.timeout,
                )?;
                attached["sessionId"].as_str().map(str::to_string)
            }
        };
        let result = session.raw_call(&call.method, call.params, session_id.as_deref(), timeout)?;
        Ok(json!({
            "success": true,
            "method": args.method,
            "target_id": args.target_id,
            "session_id": session_id,
            "result": result,
        }))
    })
}

/// Take a screenshot, save it, and have the vision model answer the question about it
/// (`vision.rs`). Without a configured key the screenshot is returned for the agent's
/// own model to look at.
pub fn vision(
    registry: &Registry,
    args: VisionArgs,
    task: &str,
    default_dir: &std::path::Path,
) -> Result<Value, BrowserError> {
    let dir: PathBuf = registry
        .settings()
        .screenshot_dir
        .clone()
        .unwrap_or_else(|| default_dir.to_path_buf());
    let (path, bytes) = registry.with(task, false, |session| {
        let shot = session.page_call("Page.captureScreenshot", json!({ "format": "png" }))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(shot["data"].as_str().unwrap_or_default())
            .map_err(|e| BrowserError::Other(format!("screenshot was not base64: {e}")))?;
        std::fs::create_dir_all(&dir)?;
        let stamp = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or_default();
        let path = dir.join(format!("browser_screenshot_{stamp}.png"));
        std::fs::write(&path, &bytes)?;
        Ok((path, bytes))
    })?;
    let settings = &registry.settings().vision;
    let question = match args.question.trim() {
        "" => "Describe what the page shows.",
        q => q,
    };
    let key = match settings.access() {
        Access::Call(key) => key,
        Access::NoKey(variable) => {
            return Ok(json!({
                "success": false,
                "error": format!("browser_vision: no vision model key ({variable} is not set; or set api_key_env = \"\" in [plugins.config.browser.vision] for a keyless server), so the screenshot was saved but not analysed"),
                "question": args.question,
                "annotate": args.annotate,
                "screenshot_path": path,
                "_images": [{ "path": path, "mime_type": "image/png" }],
            }));
        }
    };
    match crate::vision::analyse(settings, key.as_deref(), question, &bytes) {
        Ok(analysis) => Ok(json!({
            "success": true,
            "analysis": analysis,
            "screenshot_path": path,
        })),
        Err(err) => Ok(json!({
            "success": false,
            "error": format!("Error during vision analysis: {err}"),
            "screenshot_path": path,
            "note": "The screenshot was captured; only the analysis failed.",
        })),
    }
}
