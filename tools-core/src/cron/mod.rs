//! Scheduled jobs (`cronjob`, toolset `cronjob`): an agent task that runs later, with
//! nobody watching, on a cron expression, an interval or once (docs/hermes/cron.md).
//!
//! - [`schedule`] / [`cron_expr`] — what Hermes accepts as a schedule, and when it fires
//!   next in the configured time zone (DST handled);
//! - [`job`] — the job record in Hermes' shape and the summary the tool returns;
//! - [`store`] — the SQLite store under `<home>/cron/` (jobs, claims, run history);
//! - [`scan`] — the prompt injection / exfiltration screen;
//! - [`prompt`] / [`script`] — what a run gives the agent; pre-run scripts;
//! - [`approval`] — a human approves jobs that run a script, at creation and on change;
//! - [`fire`] — one run end to end (shared by the tool's `run` and the scheduler);
//! - [`settings`] — `[cron]`.
//!
//! The scheduler itself (`toolhost cron tick` / `daemon`) and the agent that runs a
//! job live in the host (`host/src/cron/`), which installs a [`fire::CronExecutor`].

pub mod actions;
pub mod approval;
pub mod cron_expr;
pub mod fire;
pub mod job;
pub mod prompt;
pub mod scan;
pub mod schedule;
pub mod script;
#[cfg(test)]
mod script_tests;
pub mod settings;
pub mod store;

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use jiff::SignedDuration;

use crate::home::Home;
pub use fire::{AgentRun, CronExecutor, CronExecutorSlot, Firing};
pub use job::CronJob;
pub use schedule::Schedule;
pub use settings::CronSettings;
pub use store::{Claim, CronStore, CronStoreError, RunRecord, RunResult};

/// Why the cron service is unusable.
#[derive(Debug, thiserror::Error)]
pub enum CronError {
    /// `[cron] timezone` is unknown.
    #[error(transparent)]
    TimeZone(#[from] settings::UnknownTimeZone),
    /// The store could not be opened.
    #[error(transparent)]
    Store(#[from] CronStoreError),
}

/// The cron pieces core services share: settings, the store (opened on first use),
/// and the host's executor.
#[derive(Debug)]
pub struct CronService {
    home: Home,
    /// `[cron]`.
    pub settings: CronSettings,
    store: Mutex<Option<Arc<CronStore>>>,
    /// The host's agent runner.
    pub executor: CronExecutorSlot,
}

impl CronService {
    /// The service for `home`; nothing is opened yet.
    pub fn new(home: Home, settings: CronSettings) -> Self {
        CronService {
            home,
            settings,
            store: Mutex::new(None),
            executor: CronExecutorSlot::default(),
        }
    }

    /// `<home>/cron`.
    pub fn dir(&self) -> PathBuf {
        self.home.root().join("cron")
    }

    /// `<home>/scripts`, where job scripts live.
    pub fn scripts_dir(&self) -> PathBuf {
        self.home.scripts_dir()
    }

    /// The store, opened (and created) on first use.
    pub fn store(&self) -> Result<Arc<CronStore>, CronError> {
        let mut slot = self.store.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(store) = slot.as_ref() {
            return Ok(Arc::clone(store));
        }
        let tz = self.settings.time_zone()?;
        let store = Arc::new(CronStore::open(
            &self.dir().join("cron.db"),
            tz,
            self.settings.output_retention,
        )?);
        *slot = Some(Arc::clone(&store));
        Ok(store)
    }

    /// How long a claim lasts: the run timeout plus five minutes.
    pub fn claim_ttl(&self) -> SignedDuration {
        let secs = i64::try_from(self.settings.job_timeout).unwrap_or(i64::MAX / 2);
        SignedDuration::from_secs(secs.saturating_add(300))
    }
}

/// Who claims: this process (`<host>:<pid>`), for the record only.
pub fn owner_id() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "localhost".into());
    format!("{host}:{}", std::process::id())
}
