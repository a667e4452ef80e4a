//! `[cron]` in `config.toml`: the time zone schedules are read in, the run timeout,
//! how many runs are kept, and the delivery targets a job's `deliver` may name.
//!
//! ```toml
//! [cron]
//! timezone = "Europe/Paris"   # default: $TZ, else the system's zone
//! job_timeout = 1800          # seconds one run may take (the agent is stopped)
//! output_retention = 50       # runs kept per job (0 keeps all)
//! tick_interval = 60          # seconds between `toolhost cron daemon` ticks
//!
//! [cron.targets.desktop]      # deliver = "desktop" pipes the final response to:
//! command = ["notify-send", "toolhost cron"]
//! ```

use std::collections::BTreeMap;

use jiff::tz::TimeZone;
use serde::Deserialize;

/// One delivery target: a command the final response is piped to (stdin), with
/// `TOOLHOST_CRON_JOB_ID` and `TOOLHOST_CRON_JOB_NAME` in its environment.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct DeliveryTarget {
    /// Program and arguments (no shell).
    pub command: Vec<String>,
    /// Seconds before the command is killed.
    pub timeout: Option<u64>,
}

/// `[cron]`.
#[derive(Clone, Debug, Deserialize, PartialEq)]
#[serde(default)]
pub struct CronSettings {
    /// IANA zone name; `None`: `$TZ`, else the system zone.
    pub timezone: Option<String>,
    /// Seconds one run may take.
    pub job_timeout: u64,
    /// Runs kept per job (0: all).
    pub output_retention: usize,
    /// Seconds between daemon ticks.
    pub tick_interval: u64,
    /// Named delivery targets.
    pub targets: BTreeMap<String, DeliveryTarget>,
}

impl Default for CronSettings {
    fn default() -> Self {
        CronSettings {
            timezone: None,
            job_timeout: 1800,
            output_retention: 50,
            tick_interval: 60,
            targets: BTreeMap::new(),
        }
    }
}

/// The configured time zone is not known.
#[derive(Debug, thiserror::Error)]
#[error("[cron] timezone '{name}' is not a known time zone: {source}")]
pub struct UnknownTimeZone {
    /// The name.
    pub name: String,
    /// Why.
    #[source]
    pub source: jiff::Error,
}

impl CronSettings {
    /// The time zone schedules are read in.
    pub fn time_zone(&self) -> Result<TimeZone, UnknownTimeZone> {
        match &self.timezone {
            Some(name) => TimeZone::get(name).map_err(|source| UnknownTimeZone {
                name: name.clone(),
                source,
            }),
            None => Ok(TimeZone::system()),
        }
    }
}
