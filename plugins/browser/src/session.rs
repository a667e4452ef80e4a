//! [`Session`]: one task's browser — the process (when local), the DevTools connection,
//! its page, the refs of the last snapshot and what the page reported (console
//! messages, uncaught exceptions, open dialogs).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cdp::{Connection, EventSink};
use crate::error::BrowserError;
use crate::guard::{self, Guard, SharedGuard};
use crate::launch::Chromium;
use crate::settings::Settings;
use crate::snapshot::RefTarget;

/// What the page reported since the last read.
#[derive(Debug, Default)]
pub struct PageEvents {
    /// `{type, text, source}` per console call.
    pub console: Vec<Value>,
    /// `{message, source}` per uncaught exception.
    pub errors: Vec<Value>,
    /// Open JavaScript dialogs: `{id, type, message, default_prompt}`.
    pub dialogs: Vec<Value>,
    /// Count of `Page.loadEventFired`.
    pub loads: u64,
    next_dialog: u64,
}

impl PageEvents {
    fn record(&mut self, method: &str, params: &Value) {
        match method {
            "Runtime.consoleAPICalled" => {
                let text = params["args"]
                    .as_array()
                    .map(|args| args.iter().map(arg_text).collect::<Vec<_>>().join(" "))
                    .unwrap_or_default();
                let kind = match params["type"].as_str() {
                    Some("warning") => "warn",
                    Some(other) => other,
                    None => "log",
                };
                self.console
                    .push(json!({ "type": kind, "text": text, "source": "console" }));
            }
            "Runtime.exceptionThrown" => {
                let details = &params["exceptionDetails"];
                let message = details["exception"]["description"]
                    .as_str()
                    .or_else(|| details["text"].as_str())
                    .unwrap_or("uncaught exception");
                self.errors
                    .push(json!({ "message": message, "source": "exception" }));
            }
            "Page.javascriptDialogOpening" => {
                self.next_dialog += 1;
                self.dialogs.push(json!({
                    "id": format!("d{}", self.next_dialog),
                    "type": params["type"],
                    "message": params["message"],
                    "default_prompt": params["defaultPrompt"],
                }));
            }
            "Page.javascriptDialogClosed" if !self.dialogs.is_empty() => {
                self.dialogs.remove(0);
            }
            "Page.loadEventFired" => self.loads += 1,
            _ => {}
        }
    }
}

fn arg_text(arg: &Value) -> String {
    match &arg["value"] {
        Value::String(s) => s.clone(),
        Value::Null => arg["description"]
            .as_str()
            .unwrap_or_else(|| arg["type"].as_str().unwrap_or(""))
            .to_string(),
        other => other.to_string(),
    }
}

/// One task's browser.
#[derive(Debug)]
pub struct Session {
    /// The page's CDP session id.
    pub page: String,
    /// The page's target id.
    pub target: String,
    /// `e1` → element, from the last snapshot.
    pub refs: HashMap<String, RefTarget>,
    /// The execution context of the snapshot walker's isolated world, once made.
    pub walker_world: Option<i64>,
    /// Reported page events.
    pub events: Arc<Mutex<PageEvents>>,
    /// When the session was last used.
    pub last_used: Instant,
    /// Seconds a page operation may take.
    pub timeout: Duration,
    /// The request guard judging every request of this browser (`guard.rs`).
    pub guard: SharedGuard,
    /// This task's download folder (`downloads.rs`).
    pub downloads: PathBuf,
    conn: Connection,
    // Dropped after `conn`, so the socket closes before the process dies.
    #[cfg_attr(
        not(test),
        allow(dead_code, reason = "held so the browser lives as long as the session")
    )]
    process: Option<Chromium>,
}

impl Session {
    /// Start a local browser or connect to `cdp_url`, put it under the request guard,
    /// send its downloads to `task`'s folder, and open a page.
    pub fn start(settings: &Settings, task: &str) -> Result<Self, BrowserError> {
        let (process, ws_url) = match &settings.cdp_url {
            Some(url) => (None, url.clone()),
            None => {
                let binary = settings.chromium_binary().ok_or(BrowserError::NoChromium)?;
                let chromium = Chromium::start(&binary)?;
                let url = chromium.ws_url.clone();
                (Some(chromium), url)
            }
        };
        let events: Arc<Mutex<PageEvents>> = Arc::default();
        let sink_events = Arc::clone(&events);
        let (guard_tx, guard_rx) = std::sync::mpsc::channel();
        let sink: EventSink = Arc::new(move |method, params, session| {
            if guard::wants(method) {
                guard::forward(&guard_tx, method, params, session);
            } else if let Ok(mut events) = sink_events.lock() {
                events.record(method, params);
            }
        });
        let ca_file = settings
            .cdp_url
            .as_ref()
            .and(settings.cdp_ca_file.as_deref());
        let conn = Connection::open(&ws_url, sink, ca_file)?;
        let timeout = Duration::from_secs(settings.command_timeout_secs.max(1));
        let request_guard = Guard::new(settings.policy());
        guard::start(conn.link(), Arc::clone(&request_guard), guard_rx, timeout);
        conn.call("Target.setAutoAttach", guard::auto_attach(), None, timeout)?;
        let downloads = crate::downloads::folder(settings, task)?;
        let set_downloads = conn.call(
            "Browser.setDownloadBehavior",
            crate::downloads::behavior("allow", &downloads),
            None,
            timeout,
        );
        // A remote browser saves on its own machine (some endpoints refuse the method);
        // a local one must send downloads to the task's folder.
        if process.is_some() {
            set_downloads?;
        }
        let created = conn.call(
            "Target.createTarget",
            json!({ "url": "about:blank" }),
            None,
            timeout,
        )?;
        let target = created["targetId"].as_str().unwrap_or_default().to_string();
        let attached = conn.call(
            "Target.attachToTarget",
            json!({ "targetId": target, "flatten": true }),
            None,
            timeout,
        )?;
        let page = attached["sessionId"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let session = Session {
            page,
            target,
            refs: HashMap::new(),
            walker_world: None,
            events,
            last_used: Instant::now(),
            timeout,
            guard: request_guard,
            downloads,
            conn,
            process,
        };
        for domain in ["Page.enable", "Runtime.enable", "DOM.enable"] {
            session.page_call(domain, json!({}))?;
        }
        Ok(session)
    }

    /// Call a page-level method.
    pub fn page_call(&self, method: &str, params: Value) -> Result<Value, BrowserError> {
        self.conn
            .call(method, params, Some(&self.page), self.timeout)
    }

    /// Call a method on `session` (browser level when `None`) with a timeout.
    pub fn raw_call(
        &self,
        method: &str,
        params: Value,
        session: Option<&str>,
        timeout: Duration,
    ) -> Result<Value, BrowserError> {
        self.conn.call(method, params, session, timeout)
    }

    /// Evaluate `expression` in the page and return its JSON value.
    pub fn evaluate(&self, expression: &str) -> Result<Value, BrowserError> {
        let reply = self.page_call(
            "Runtime.evaluate",
            json!({ "expression": expression, "returnByValue": true, "awaitPromise": true }),
        )?;
        if let Some(details) = reply.get("exceptionDetails") {
            let message = details["exception"]["description"]
                .as_str()
                .or_else(|| details["text"].as_str())
                .unwrap_or("exception");
            return Err(BrowserError::Other(format!("JavaScript error: {message}")));
        }
        Ok(reply["result"]["value"].clone())
    }

    /// Number of load events so far.
    pub fn loads(&self) -> u64 {
        self.events.lock().map(|e| e.loads).unwrap_or_default()
    }

    /// The open dialogs.
    pub fn dialogs(&self) -> Vec<Value> {
        self.events
            .lock()
            .map(|e| e.dialogs.clone())
            .unwrap_or_default()
    }

    /// Wait until more than `before` load events were seen, a dialog opened, or `limit`.
    pub fn wait_for_load(&self, before: u64, limit: Duration) {
        let deadline = Instant::now() + limit;
        while Instant::now() < deadline {
            if self.loads() > before || !self.dialogs().is_empty() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The backend node of `reference` (`@e3`, `e3` or `ref=e3`).
    pub fn node(&self, reference: &str) -> Result<i64, BrowserError> {
        let key = reference
            .trim()
            .trim_start_matches('@')
            .trim_start_matches("ref=")
            .trim_matches(|c| c == '[' || c == ']');
        match self.refs.get(key).copied() {
            None => Err(BrowserError::UnknownRef(reference.to_string())),
            Some(RefTarget::Backend(node)) => Ok(node),
            Some(RefTarget::Walked { context, index }) => {
                crate::walker::resolve(self, context, index)?
                    .ok_or_else(|| BrowserError::StaleRef(reference.to_string()))
            }
        }
    }

    /// The local browser's process id (`None` for a remote endpoint).
    #[cfg(test)]
    pub fn pid(&self) -> Option<u32> {
        self.process.as_ref().map(Chromium::pid)
    }
}

impl Drop for Session {
    /// A remote browser outlives us: close the tab we opened in it. (A local one is
    /// killed with its process.)
    fn drop(&mut self) {
        if self.process.is_none() {
            let _ = self.conn.call(
                "Target.closeTarget",
                json!({ "targetId": self.target }),
                None,
                Duration::from_secs(2),
            );
        }
    }
}
