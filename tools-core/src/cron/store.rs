//! The durable job store: SQLite at `<home>/cron/cron.db` (WAL, every change one
//! transaction, so a crash mid-write loses nothing and never leaves half a job).
//!
//! - `jobs`: one row per job, the record as JSON in Hermes' shape, plus the fire claim
//!   (`claimed_by`, `claimed_at`);
//! - `runs`: one row per run: times, status, error, delivery, the agent's final
//!   response and the full output document (the newest `retention` per job are kept).
//!
//! At most once: a job is claimed inside an `IMMEDIATE` transaction (SQLite's
//! database-wide write lock, shared by every process on the home) before it runs; a
//! fresh claim makes every other scheduler, tick or `run` skip it. Claiming also
//! advances a recurring job's `next_run_at`, so a crash mid-run skips that run instead
//! of repeating it; a claim older than its time-to-live (the run's timeout plus a
//! margin) is taken to belong to a dead process and may be taken over.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use rusqlite::{Connection, OptionalExtension, Transaction, TransactionBehavior, params};

use super::job::CronJob;
use super::schedule::{Schedule, format_ts, parse_ts};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    record TEXT NOT NULL,
    claimed_by TEXT,
    claimed_at INTEGER
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    job_name TEXT NOT NULL,
    started_at TEXT NOT NULL,
    finished_at TEXT,
    status TEXT NOT NULL,
    error TEXT,
    delivered INTEGER NOT NULL DEFAULT 0,
    delivery_error TEXT,
    session_id TEXT,
    response TEXT,
    output TEXT
);
CREATE INDEX IF NOT EXISTS runs_by_job ON runs(job_id, id);
";

/// Why the store failed.
#[derive(Debug, thiserror::Error)]
pub enum CronStoreError {
    /// The directory could not be created.
    #[error("cannot create {path}: {source}", path = .path.display())]
    Dir {
        /// The directory.
        path: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// SQLite failed.
    #[error("cron database {path}: {source}", path = .path.display())]
    Db {
        /// The database file.
        path: PathBuf,
        /// The SQLite error.
        #[source]
        source: rusqlite::Error,
    },
}

/// What claiming one job for a run gave.
#[derive(Debug, Clone, PartialEq)]
pub enum Claim {
    /// Claimed: the caller runs it and then calls [`CronStore::finish`].
    Claimed(Box<CronJob>),
    /// No such job.
    Missing,
    /// Paused or finished.
    NotRunnable,
    /// Another process holds a fresh claim (it is running the job now).
    Busy,
}

/// How a run ended, for [`CronStore::finish`] and the run history.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunResult {
    /// The job did its work.
    pub success: bool,
    /// Why not.
    pub error: Option<String>,
    /// The final response was delivered somewhere besides the store.
    pub delivered: bool,
    /// Why delivery failed.
    pub delivery_error: Option<String>,
    /// The agent session the run used.
    pub session_id: Option<String>,
    /// The final response.
    pub response: String,
    /// The whole output document (Markdown).
    pub output: String,
    /// The response was the silence marker: nothing to deliver.
    pub silent: bool,
}

/// One run in the history.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RunRecord {
    /// Run number.
    pub id: i64,
    /// The job.
    pub job_id: String,
    /// The job's name then.
    pub job_name: String,
    /// Start time.
    pub started_at: String,
    /// End time (`None` while running, or when the runner died).
    pub finished_at: Option<String>,
    /// `running`, `ok`, `silent` or `error`.
    pub status: String,
    /// Why it failed.
    pub error: Option<String>,
    /// Delivered besides the store.
    pub delivered: bool,
    /// Why delivery failed.
    pub delivery_error: Option<String>,
    /// The agent session.
    pub session_id: Option<String>,
    /// The final response.
    pub response: Option<String>,
    /// The full output document.
    pub output: Option<String>,
}

/// The store.
#[derive(Debug)]
pub struct CronStore {
    path: PathBuf,
    conn: Mutex<Connection>,
    tz: TimeZone,
    retention: usize,
}

fn load(tx: &Connection, id: &str) -> rusqlite::Result<Option<(CronJob, Option<i64>)>> {
    tx.query_row(
        "SELECT record, claimed_at FROM jobs WHERE id = ?1",
        params![id],
        |row| Ok((row.get::<_, String>(0)?, row.get::<_, Option<i64>>(1)?)),
    )
    .optional()
    .map(|row| row.and_then(|(record, claimed)| decode(id, &record).map(|j| (j, claimed))))
}

fn decode(id: &str, record: &str) -> Option<CronJob> {
    match serde_json::from_str(record) {
        Ok(job) => Some(job),
        Err(err) => {
            tracing::warn!(job = id, %err, "skipping unreadable cron job record");
            None
        }
    }
}

fn encode(job: &CronJob) -> rusqlite::Result<String> {
    serde_json::to_string(job).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

fn save(tx: &Connection, job: &CronJob) -> rusqlite::Result<()> {
    tx.execute(
        "UPDATE jobs SET record = ?2 WHERE id = ?1",
        params![job.id, encode(job)?],
    )?;
    Ok(())
}

fn fresh(claimed_at: Option<i64>, now: Timestamp, ttl: SignedDuration) -> bool {
    claimed_at.is_some_and(|at| {
        let age = now.as_second() - at;
        (0..ttl.as_secs()).contains(&age)
    })
}

impl CronStore {
    /// Open (creating) the database at `path`; times are shown in `tz`; `retention`
    /// runs are kept per job (0 keeps all).
    pub fn open(path: &Path, tz: TimeZone, retention: usize) -> Result<Self, CronStoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|source| CronStoreError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let db = |source| CronStoreError::Db {
            path: path.to_path_buf(),
            source,
        };
        let conn = Connection::open(path).map_err(db)?;
        conn.busy_timeout(std::time::Duration::from_secs(30))
            .map_err(db)?;
        conn.pragma_update_and_check(None, "journal_mode", "WAL", |_| Ok(()))
            .map_err(db)?;
        conn.pragma_update(None, "synchronous", "FULL")
            .map_err(db)?;
        conn.execute_batch(SCHEMA).map_err(db)?;
        Ok(CronStore {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
            tz,
            retention,
        })
    }

    /// The time zone schedules are read in.
    pub fn tz(&self) -> &TimeZone {
        &self.tz
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> rusqlite::Result<T>,
    ) -> Result<T, CronStoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        let run = |conn: &mut Connection| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let out = f(&tx)?;
            tx.commit()?;
            Ok(out)
        };
        run(&mut conn).map_err(|source| CronStoreError::Db {
            path: self.path.clone(),
            source,
        })
    }

    /// Add a job.
    pub fn insert(&self, job: &CronJob) -> Result<(), CronStoreError> {
        self.with(|tx| {
            tx.execute(
                "INSERT INTO jobs (id, seq, record) VALUES (?1, (SELECT COALESCE(MAX(seq), 0) + 1 FROM jobs), ?2)",
                params![job.id, encode(job)?],
            )?;
            Ok(())
        })
    }

    /// The job with this id.
    pub fn get(&self, id: &str) -> Result<Option<CronJob>, CronStoreError> {
        self.with(|tx| Ok(load(tx, id)?.map(|(job, _)| job)))
    }

    /// Every job, oldest first.
    pub fn list(&self) -> Result<Vec<CronJob>, CronStoreError> {
        self.with(|tx| {
            let mut stmt = tx.prepare("SELECT id, record FROM jobs ORDER BY seq")?;
            let rows = stmt.query_map([], |row| {
                Ok((row.get::<_, String>(0)?, row.get::<_, String>(1)?))
            })?;
            let mut jobs = Vec::new();
            for row in rows {
                let (id, record) = row?;
                jobs.extend(decode(&id, &record));
            }
            Ok(jobs)
        })
    }

    /// Change a job in one transaction: `change` may refuse (its error is returned
    /// as `Ok(Err(..))`, nothing written). `Ok(Ok(None))`: no such job.
    pub fn update<E>(
        &self,
        id: &str,
        change: impl FnOnce(&mut CronJob) -> Result<(), E>,
    ) -> Result<Result<Option<CronJob>, E>, CronStoreError> {
        self.with(|tx| {
            let Some((mut job, _)) = load(tx, id)? else {
                return Ok(Ok(None));
            };
            if let Err(e) = change(&mut job) {
                return Ok(Err(e));
            }
            save(tx, &job)?;
            Ok(Ok(Some(job)))
        })
    }

    /// Remove a job and its run history; false when it did not exist.
    pub fn remove(&self, id: &str) -> Result<bool, CronStoreError> {
        self.with(|tx| {
            let n = tx.execute("DELETE FROM jobs WHERE id = ?1", params![id])?;
            tx.execute("DELETE FROM runs WHERE job_id = ?1", params![id])?;
            Ok(n > 0)
        })
    }

    /// What firing does to the record: the run counts against `repeat`, and a
    /// recurring job's next run moves past `now` (at most once).
    fn mark_fired(&self, job: &mut CronJob, now: Timestamp) {
        job.repeat.completed = job.repeat.completed.saturating_add(1);
        if job.schedule.recurring() {
            job.next_run_at = job
                .schedule
                .next_run(now, Some(now), &self.tz)
                .map(|t| format_ts(t, &self.tz));
        }
    }

    /// Claim one job to run now (`cronjob run`), whatever its schedule.
    pub fn claim(
        &self,
        id: &str,
        owner: &str,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<Claim, CronStoreError> {
        self.with(|tx| {
            let Some((mut job, claimed_at)) = load(tx, id)? else {
                return Ok(Claim::Missing);
            };
            if !job.runnable() {
                return Ok(Claim::NotRunnable);
            }
            if fresh(claimed_at, now, ttl) {
                return Ok(Claim::Busy);
            }
            self.mark_fired(&mut job, now);
            save(tx, &job)?;
            tx.execute(
                "UPDATE jobs SET claimed_by = ?2, claimed_at = ?3 WHERE id = ?1",
                params![id, owner, now.as_second()],
            )?;
            Ok(Claim::Claimed(Box::new(job)))
        })
    }

    /// Claim every job due at `now` (Hermes' `get_due_jobs` + claim): a job whose run
    /// time is unset gets one computed; a recurring job more than its grace late runs
    /// once now and its missed runs are skipped; a one-shot that already used its
    /// runs is removed. Jobs another process holds are left alone.
    pub fn claim_due(
        &self,
        owner: &str,
        now: Timestamp,
        ttl: SignedDuration,
    ) -> Result<Vec<CronJob>, CronStoreError> {
        self.with(|tx| {
            let mut stmt = tx.prepare("SELECT id FROM jobs ORDER BY seq")?;
            let ids: Vec<String> = stmt
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            drop(stmt);
            let mut due = Vec::new();
            for id in ids {
                let Some((mut job, claimed_at)) = load(tx, &id)? else {
                    continue;
                };
                if !job.runnable() || fresh(claimed_at, now, ttl) {
                    continue;
                }
                let next = job.next_run_at.as_deref().and_then(|t| parse_ts(t, &self.tz));
                let next = match next {
                    Some(next) => next,
                    None => {
                        let last = job.last_run_at.as_deref().and_then(|t| parse_ts(t, &self.tz));
                        let Some(recovered) = job.schedule.next_run(now, last, &self.tz) else {
                            continue;
                        };
                        job.next_run_at = Some(format_ts(recovered, &self.tz));
                        save(tx, &job)?;
                        recovered
                    }
                };
                if next > now {
                    continue;
                }
                if let (Schedule::Once { .. }, Some(times)) = (&job.schedule, job.repeat.times)
                    && job.repeat.completed >= times
                {
                    tx.execute("DELETE FROM jobs WHERE id = ?1", params![id])?;
                    continue;
                }
                let late = now.as_second() - next.as_second();
                if job.schedule.recurring() && late > job.schedule.grace_seconds(now, &self.tz) {
                    tracing::info!(job = %job.id, late_secs = late, "missed runs skipped; running once now");
                }
                self.mark_fired(&mut job, now);
                save(tx, &job)?;
                tx.execute(
                    "UPDATE jobs SET claimed_by = ?2, claimed_at = ?3 WHERE id = ?1",
                    params![id, owner, now.as_second()],
                )?;
                due.push(job);
            }
            Ok(due)
        })
    }

    /// Record that a claimed run ended at `now` and release the claim (Hermes'
    /// `mark_job_run`): last run fields; a job that used its `repeat` runs is
    /// removed; otherwise the next run is computed (a finished one-shot is disabled,
    /// a recurring job with no next run is marked `error`, never silently disabled).
    pub fn finish(
        &self,
        id: &str,
        result: &RunResult,
        now: Timestamp,
    ) -> Result<(), CronStoreError> {
        self.with(|tx| {
            let Some((mut job, _)) = load(tx, id)? else {
                return Ok(());
            };
            let now_text = format_ts(now, &self.tz);
            job.last_run_at = Some(now_text);
            job.last_status = Some(if result.success { "ok" } else { "error" }.into());
            job.last_error = if result.success {
                None
            } else {
                result.error.clone()
            };
            job.last_delivery_error = result.delivery_error.clone();
            if job.repeat.times.is_some_and(|t| job.repeat.completed >= t) {
                tx.execute("DELETE FROM jobs WHERE id = ?1", params![id])?;
                return Ok(());
            }
            let next = job.schedule.next_run(now, Some(now), &self.tz);
            job.next_run_at = next.map(|t| format_ts(t, &self.tz));
            if next.is_none() {
                if job.schedule.recurring() {
                    job.state = "error".into();
                    job.last_error.get_or_insert_with(|| {
                        "Failed to compute the next run of a recurring schedule".into()
                    });
                } else {
                    job.enabled = false;
                    job.state = "completed".into();
                }
            } else if job.state != "paused" {
                job.state = "scheduled".into();
            }
            save(tx, &job)?;
            tx.execute(
                "UPDATE jobs SET claimed_by = NULL, claimed_at = NULL WHERE id = ?1",
                params![id],
            )?;
            Ok(())
        })
    }

    /// Start a run record; returns its number.
    pub fn start_run(&self, job: &CronJob, now: Timestamp) -> Result<i64, CronStoreError> {
        let started = format_ts(now, &self.tz);
        self.with(|tx| {
            tx.execute(
                "INSERT INTO runs (job_id, job_name, started_at, status) VALUES (?1, ?2, ?3, 'running')",
                params![job.id, job.name, started],
            )?;
            Ok(tx.last_insert_rowid())
        })
    }

    /// Complete a run record, then drop the job's runs beyond the retention.
    pub fn finish_run(
        &self,
        run: i64,
        result: &RunResult,
        now: Timestamp,
    ) -> Result<(), CronStoreError> {
        let finished = format_ts(now, &self.tz);
        let status = match (result.success, result.silent) {
            (false, _) => "error",
            (true, true) => "silent",
            (true, false) => "ok",
        };
        let retention = i64::try_from(self.retention).unwrap_or(i64::MAX);
        self.with(|tx| {
            tx.execute(
                "UPDATE runs SET finished_at = ?2, status = ?3, error = ?4, delivered = ?5, \
                 delivery_error = ?6, session_id = ?7, response = ?8, output = ?9 WHERE id = ?1",
                params![
                    run,
                    finished,
                    status,
                    result.error,
                    result.delivered,
                    result.delivery_error,
                    result.session_id,
                    result.response,
                    result.output
                ],
            )?;
            if retention > 0 {
                tx.execute(
                    "DELETE FROM runs WHERE job_id = (SELECT job_id FROM runs WHERE id = ?1) \
                     AND id NOT IN (SELECT id FROM runs WHERE job_id = (SELECT job_id FROM runs WHERE id = ?1) \
                     ORDER BY id DESC LIMIT ?2)",
                    params![run, retention],
                )?;
            }
            Ok(())
        })
    }

    /// A job's runs, newest first (at most `limit`).
    pub fn runs(&self, job_id: &str, limit: usize) -> Result<Vec<RunRecord>, CronStoreError> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.with(|tx| {
            let mut stmt = tx.prepare(
                "SELECT id, job_id, job_name, started_at, finished_at, status, error, delivered, \
                 delivery_error, session_id, response, output FROM runs WHERE job_id = ?1 \
                 ORDER BY id DESC LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![job_id, limit], |row| {
                Ok(RunRecord {
                    id: row.get(0)?,
                    job_id: row.get(1)?,
                    job_name: row.get(2)?,
                    started_at: row.get(3)?,
                    finished_at: row.get(4)?,
                    status: row.get(5)?,
                    error: row.get(6)?,
                    delivered: row.get(7)?,
                    delivery_error: row.get(8)?,
                    session_id: row.get(9)?,
                    response: row.get(10)?,
                    output: row.get(11)?,
                })
            })?;
            rows.collect()
        })
    }

    /// The final response of a job's latest successful run (`context_from`).
    pub fn latest_response(&self, job_id: &str) -> Result<Option<String>, CronStoreError> {
        self.with(|tx| {
            tx.query_row(
                "SELECT response FROM runs WHERE job_id = ?1 AND status = 'ok' ORDER BY id DESC LIMIT 1",
                params![job_id],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()
            .map(Option::flatten)
        })
    }
}

#[cfg(test)]
#[path = "store_tests.rs"]
mod tests;
