//! The per-task browsers: one [`Session`] per `ToolContext::task_id`, started on first
//! use and closed by a reaper thread once idle for `idle_timeout_secs`. (When the
//! process exits, `PR_SET_PDEATHSIG` takes the browsers down — see `launch.rs`.)

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::error::BrowserError;
use crate::session::Session;
use crate::settings::Settings;

type Slot = Arc<Mutex<Option<Session>>>;

/// All sessions of this process.
#[derive(Debug)]
pub struct Registry {
    settings: Settings,
    sessions: Mutex<HashMap<String, Slot>>,
}

impl Registry {
    /// A registry using `settings`; starts the idle reaper.
    pub fn new(settings: Settings) -> Arc<Self> {
        let registry = Arc::new(Registry {
            settings,
            sessions: Mutex::default(),
        });
        let weak = Arc::downgrade(&registry);
        let period = Duration::from_secs(registry.settings.idle_timeout_secs.clamp(1, 30));
        let _ = std::thread::Builder::new()
            .name("toolhost-browser-reaper".into())
            .spawn(move || {
                while let Some(registry) = weak.upgrade() {
                    registry.reap();
                    drop(registry);
                    std::thread::sleep(period);
                }
            });
        registry
    }

    /// The settings.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    fn slot(&self, task: &str) -> Slot {
        let key = if task.is_empty() { "default" } else { task };
        let mut sessions = self
            .sessions
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(sessions.entry(key.to_string()).or_default())
    }

    /// Run `f` on the task's browser, starting it when `start` is true.
    pub fn with<T>(
        &self,
        task: &str,
        start: bool,
        f: impl FnOnce(&mut Session) -> Result<T, BrowserError>,
    ) -> Result<T, BrowserError> {
        let slot = self.slot(task);
        let mut guard: MutexGuard<'_, Option<Session>> = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if guard.is_none() {
            if !start {
                return Err(BrowserError::Other(
                    "no browser session for this task: call browser_navigate first".into(),
                ));
            }
            *guard = Some(Session::start(&self.settings, task)?);
        }
        let Some(session) = guard.as_mut() else {
            return Err(BrowserError::Closed);
        };
        session.last_used = Instant::now();
        let result = f(session);
        if matches!(result, Err(BrowserError::Closed)) {
            // The browser went away: the next call starts a new one.
            *guard = None;
        }
        result
    }

    /// Close the browsers idle for longer than the timeout.
    pub fn reap(&self) {
        let limit = Duration::from_secs(self.settings.idle_timeout_secs);
        let slots: Vec<Slot> = match self.sessions.lock() {
            Ok(sessions) => sessions.values().cloned().collect(),
            Err(_) => return,
        };
        for slot in slots {
            // A busy session is in use, hence not idle.
            if let Ok(mut guard) = slot.try_lock()
                && guard
                    .as_ref()
                    .is_some_and(|s| s.last_used.elapsed() > limit)
            {
                *guard = None;
            }
        }
    }

    /// Close every browser.
    #[cfg(test)]
    pub fn close_all(&self) {
        if let Ok(mut sessions) = self.sessions.lock() {
            sessions.clear();
        }
    }
}
