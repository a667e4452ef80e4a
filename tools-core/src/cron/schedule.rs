//! Schedules as Hermes' `cronjob` accepts them, and when they fire next.
//!
//! - `30m`, `2h`, `1d` (also `min`, `hours`, `days`, ...): once, that long from now;
//! - `every 30m`, `every 2h`: recurring at that interval;
//! - `0 9 * * *`: a five-field cron expression ([`CronExpr`]), in the job's time zone;
//! - `2026-06-01T09:00`, `2026-06-01 09:00:00+02:00`, `2026-06-01`: once at that time
//!   (without an offset it is read in the configured time zone).
//!
//! Stored in Hermes' job shape: `{"kind": "once", "run_at", "display"}`,
//! `{"kind": "interval", "minutes", "display"}`, `{"kind": "cron", "expr", "display"}`.
//! Timestamps are ISO 8601 with an offset, as Hermes writes them.

use jiff::civil::{Date, DateTime};
use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde::{Deserialize, Serialize};
use toolhost_text::LiteralRegex;

use super::cron_expr::{CronExpr, CronExprError};

/// A one-shot may fire this long after its time (Hermes' `ONESHOT_GRACE_SECONDS`).
pub const ONESHOT_GRACE_SECONDS: i64 = 120;

/// Why a schedule was refused (messages as Hermes words them).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScheduleError {
    /// `every X` with a bad duration.
    #[error("Invalid duration: '{0}'. Use format like '30m', '2h', or '1d'")]
    Duration(String),
    /// A cron expression that does not parse.
    #[error("Invalid cron expression '{text}': {source}")]
    Cron {
        /// The expression.
        text: String,
        /// Why.
        #[source]
        source: CronExprError,
    },
    /// A timestamp that does not parse.
    #[error("Invalid timestamp '{text}': {reason}")]
    Timestamp {
        /// The text.
        text: String,
        /// Why.
        reason: String,
    },
    /// A one-shot time too far in the past.
    #[error(
        "Requested one-shot time {0} is more than {ONESHOT_GRACE_SECONDS}s in the past and cannot be scheduled."
    )]
    Past(String),
    /// Nothing recognisable.
    #[error(
        "Invalid schedule '{0}'. Use:\n  - Duration: '30m', '2h', '1d' (one-shot)\n  - Interval: 'every 30m', 'every 2h' (recurring)\n  - Cron: '0 9 * * *' (cron expression)\n  - Timestamp: '2026-02-03T14:00:00' (one-shot at time)"
    )]
    Unrecognised(String),
}

/// A parsed schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Schedule {
    /// Once, at `run_at`.
    Once {
        /// ISO 8601 with offset.
        run_at: String,
        /// What `list` shows.
        display: String,
    },
    /// Every `minutes`.
    Interval {
        /// The period.
        minutes: u64,
        /// What `list` shows.
        display: String,
    },
    /// A cron expression.
    Cron {
        /// The expression.
        expr: String,
        /// What `list` shows.
        display: String,
    },
}

static DURATION: LiteralRegex =
    LiteralRegex::new(r"^(\d+)\s*(m|min|mins|minute|minutes|h|hr|hrs|hour|hours|d|day|days)$");
static DATE_PREFIX: LiteralRegex = LiteralRegex::new(r"^\d{4}-\d{2}-\d{2}");
static CRON_FIELD: LiteralRegex = LiteralRegex::new(r"^[\d*\-,/]+$");

/// Minutes in a duration such as `30m`, `2h`, `1d` (case and surrounding space ignored).
pub fn parse_duration(text: &str) -> Result<u64, ScheduleError> {
    let lower = text.trim().to_lowercase();
    let fail = || ScheduleError::Duration(lower.clone());
    let caps = DURATION
        .get()
        .and_then(|re| re.captures(&lower))
        .ok_or_else(fail)?;
    let value: u64 = caps[1].parse().map_err(|_| fail())?;
    let unit = match caps[2].as_bytes().first() {
        Some(b'h') => 60,
        Some(b'd') => 1440,
        _ => 1,
    };
    value.checked_mul(unit).filter(|m| *m > 0).ok_or_else(fail)
}

/// `ts` as ISO 8601 in `tz`, to the second (`2026-06-01T09:00:00+02:00`).
pub fn format_ts(ts: Timestamp, tz: &TimeZone) -> String {
    ts.to_zoned(tz.clone())
        .strftime("%Y-%m-%dT%H:%M:%S%:z")
        .to_string()
}

/// Read a stored timestamp (with offset; a naive one is taken in `tz`).
pub fn parse_ts(text: &str, tz: &TimeZone) -> Option<Timestamp> {
    let text = text.trim();
    if let Ok(ts) = text.replace('Z', "+00:00").parse::<Timestamp>() {
        return Some(ts);
    }
    let civil: DateTime = text.parse().ok()?;
    tz.to_ambiguous_timestamp(civil).compatible().ok()
}

fn parse_timestamp(text: &str, tz: &TimeZone) -> Result<Timestamp, ScheduleError> {
    if let Some(ts) = parse_ts(text, tz) {
        return Ok(ts);
    }
    if let Ok(date) = text.parse::<Date>() {
        return tz
            .to_ambiguous_timestamp(date.to_datetime(jiff::civil::Time::midnight()))
            .compatible()
            .map_err(|e| ScheduleError::Timestamp {
                text: text.to_string(),
                reason: e.to_string(),
            });
    }
    Err(ScheduleError::Timestamp {
        text: text.to_string(),
        reason: "not an ISO 8601 date or date-time".into(),
    })
}

fn looks_like_cron(text: &str) -> bool {
    let parts: Vec<&str> = text.split_whitespace().collect();
    parts.len() >= 5
        && parts[..5]
            .iter()
            .all(|p| CRON_FIELD.get().is_some_and(|re| re.is_match(p)))
}

impl Schedule {
    /// Parse `text`; relative schedules count from `now`, naive times are in `tz`.
    pub fn parse(text: &str, now: Timestamp, tz: &TimeZone) -> Result<Schedule, ScheduleError> {
        let text = text.trim();
        let lower = text.to_lowercase();
        if let Some(rest) = lower.strip_prefix("every ") {
            let minutes = parse_duration(rest)?;
            return Ok(Schedule::Interval {
                minutes,
                display: format!("every {minutes}m"),
            });
        }
        if looks_like_cron(text) {
            CronExpr::parse(text).map_err(|source| ScheduleError::Cron {
                text: text.to_string(),
                source,
            })?;
            return Ok(Schedule::Cron {
                expr: text.to_string(),
                display: text.to_string(),
            });
        }
        if text.contains('T') || DATE_PREFIX.get().is_some_and(|re| re.is_match(text)) {
            let ts = parse_timestamp(text, tz)?;
            let local = ts.to_zoned(tz.clone());
            return Ok(Schedule::Once {
                run_at: format_ts(ts, tz),
                display: format!("once at {}", local.strftime("%Y-%m-%d %H:%M")),
            });
        }
        if let Ok(minutes) = parse_duration(text) {
            let run_at = i64::try_from(minutes)
                .ok()
                .and_then(|m| m.checked_mul(60))
                .and_then(|s| now.checked_add(SignedDuration::from_secs(s)).ok())
                .ok_or_else(|| ScheduleError::Unrecognised(text.to_string()))?;
            return Ok(Schedule::Once {
                run_at: format_ts(run_at, tz),
                display: format!("once in {text}"),
            });
        }
        Err(ScheduleError::Unrecognised(text.to_string()))
    }

    /// What `list` shows.
    pub fn display(&self) -> &str {
        match self {
            Schedule::Once { display, .. }
            | Schedule::Interval { display, .. }
            | Schedule::Cron { display, .. } => display,
        }
    }

    /// Whether the schedule recurs.
    pub fn recurring(&self) -> bool {
        !matches!(self, Schedule::Once { .. })
    }

    /// The next run at or after `now` (Hermes' `compute_next_run`): a one-shot that
    /// has not run and is at most [`ONESHOT_GRACE_SECONDS`] late; an interval from the
    /// last run (or from now); a cron expression's next firing after the last run (or
    /// now). `None` when nothing more will run.
    pub fn next_run(
        &self,
        now: Timestamp,
        last_run: Option<Timestamp>,
        tz: &TimeZone,
    ) -> Option<Timestamp> {
        match self {
            Schedule::Once { run_at, .. } => {
                if last_run.is_some() {
                    return None;
                }
                let at = parse_ts(run_at, tz)?;
                let earliest = now
                    .checked_sub(SignedDuration::from_secs(ONESHOT_GRACE_SECONDS))
                    .ok()?;
                (at >= earliest).then_some(at)
            }
            Schedule::Interval { minutes, .. } => {
                let secs = i64::try_from(*minutes).ok()?.checked_mul(60)?;
                last_run
                    .unwrap_or(now)
                    .checked_add(SignedDuration::from_secs(secs))
                    .ok()
            }
            Schedule::Cron { expr, .. } => CronExpr::parse(expr)
                .ok()?
                .next_after(last_run.unwrap_or(now), tz),
        }
    }

    /// How late a recurring run may be and still run as a catch-up instead of
    /// fast-forwarding (half the period, 2 minutes to 2 hours; Hermes'
    /// `_compute_grace_seconds`).
    pub fn grace_seconds(&self, now: Timestamp, tz: &TimeZone) -> i64 {
        const MIN: i64 = 120;
        const MAX: i64 = 7200;
        let period = match self {
            Schedule::Once { .. } => return MIN,
            Schedule::Interval { minutes, .. } => i64::try_from(*minutes)
                .unwrap_or(i64::MAX / 60)
                .saturating_mul(60),
            Schedule::Cron { expr, .. } => {
                let Ok(cron) = CronExpr::parse(expr) else {
                    return MIN;
                };
                let first = cron.next_after(now, tz);
                let second = first.and_then(|f| cron.next_after(f, tz));
                match (first, second) {
                    (Some(a), Some(b)) => b.duration_since(a).as_secs(),
                    _ => return MIN,
                }
            }
        };
        (period / 2).clamp(MIN, MAX)
    }
}

#[cfg(test)]
#[path = "schedule_tests.rs"]
mod tests;
