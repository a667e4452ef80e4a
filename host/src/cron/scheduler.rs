//! One scheduler tick: take the tick lock (`<home>/cron/tick.lock`, non-blocking: a
//! tick already running elsewhere makes this one a no-op, like Hermes' `tick`), claim
//! every due job in the store, run them one after another, report.
//!
//! Two schedulers never run the same job twice: the tick lock keeps ticks from
//! overlapping, and each job is claimed in the store before it runs (the claim also
//! stops `cronjob(action="run")` and schedulers on other homes' copies of the
//! database from firing it; see `tools_core::cron::store`).

use std::fs::{File, OpenOptions};
use std::path::Path;

use jiff::Timestamp;
use tools_core::CoreServices;
use tools_core::cron::{CronError, CronJob, Firing, RunResult, owner_id};

/// What a tick did.
#[derive(Debug, Default)]
pub struct TickReport {
    /// Another tick held the lock; nothing was run.
    pub locked_out: bool,
    /// The jobs run, with how each went.
    pub ran: Vec<(CronJob, RunResult)>,
}

/// Why a tick could not run.
#[derive(Debug, thiserror::Error)]
pub enum TickError {
    /// The store or settings are unusable.
    #[error(transparent)]
    Cron(#[from] CronError),
    /// The lock file could not be opened.
    #[error("cron tick lock {path}: {source}")]
    Lock {
        /// The lock file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// The tick lock, held while the tick runs (released on drop, or when the process dies).
fn try_lock(path: &Path) -> Result<Option<File>, TickError> {
    let fail = |source| TickError::Lock {
        path: path.display().to_string(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(fail)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(fail)?;
    match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
        Ok(()) => Ok(Some(file)),
        Err(rustix::io::Errno::WOULDBLOCK) => Ok(None),
        Err(e) => Err(fail(e.into())),
    }
}

/// Run every job due at `now()`.
pub fn tick(
    services: &CoreServices,
    now: &(dyn Fn() -> Timestamp + Send + Sync),
) -> Result<TickReport, TickError> {
    let cron = &services.cron;
    let Some(_lock) = try_lock(&cron.dir().join("tick.lock"))? else {
        tracing::debug!("cron tick skipped: another tick holds the lock");
        return Ok(TickReport {
            locked_out: true,
            ..TickReport::default()
        });
    };
    let store = cron.store()?;
    let due = store
        .claim_due(&owner_id(), now(), cron.claim_ttl())
        .map_err(CronError::from)?;
    let scripts_dir = cron.scripts_dir();
    let firing = Firing {
        store: &store,
        settings: &cron.settings,
        skills: &services.skills,
        scripts_dir: &scripts_dir,
        executor: cron.executor.get(),
        now,
    };
    let mut report = TickReport::default();
    for job in due {
        tracing::info!(job = %job.id, name = %job.name, "running cron job");
        let result = firing.run(&job);
        report.ran.push((job, result));
    }
    Ok(report)
}
