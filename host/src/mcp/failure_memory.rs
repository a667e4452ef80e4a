//! Remembered connection failures, so one hanging or broken MCP server does not cost
//! every later command its full `connect_timeout`.
//!
//! When connecting a server fails (it exited, refused, or never answered `initialize`
//! in time), `<home>/state/mcp-tools/<server>.failed.json` records `{"key", "written",
//! "failures", "error"}`. Commands that only need listings (`tools`, `schema`,
//! `toolsets`) and `mcp serve` then skip that server for a back-off that doubles with
//! each consecutive failure ([`backoff`]: 1 min, 2, 4, … up to 1 h), reporting the
//! remembered error instead. `toolhost mcp list` and a call of one of the server's
//! tools always try again. A successful connection deletes the record; editing the
//! server's section (a different key) or upgrading toolhost ignores it.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use super::config::ResolvedServer;
use super::listing_cache::{listing_key, load_state, now_secs, save_state};
use super::naming::sanitize;

/// Back-off after the first failure.
pub const FIRST_BACKOFF: Duration = Duration::from_secs(60);
/// Longest back-off.
pub const MAX_BACKOFF: Duration = Duration::from_secs(60 * 60);

/// How long a server that failed `failures` times in a row is skipped.
pub fn backoff(failures: u32) -> Duration {
    let doublings = failures.saturating_sub(1).min(16);
    FIRST_BACKOFF
        .saturating_mul(1u32 << doublings)
        .min(MAX_BACKOFF)
}

/// A failure still within its back-off.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RememberedFailure {
    /// Consecutive failures.
    pub failures: u32,
    /// The last error (already redacted).
    pub error: String,
    /// Seconds until the server is tried again.
    pub retry_in: u64,
}

impl RememberedFailure {
    /// The status line `mcp list`/unknown-tool notes show.
    pub fn describe(&self) -> String {
        format!(
            "{} (remembered: failed {} time(s) in a row; not retried for another {}s — `toolhost mcp list` retries now)",
            self.error, self.failures, self.retry_in
        )
    }
}

/// The failure records of one toolhost home (next to the listing cache).
#[derive(Clone, Debug)]
pub struct FailureMemory {
    dir: PathBuf,
}

impl FailureMemory {
    /// Records under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        FailureMemory { dir: dir.into() }
    }

    fn file(&self, server: &str) -> PathBuf {
        self.dir.join(format!("{}.failed.json", sanitize(server)))
    }

    fn read(&self, server: &ResolvedServer) -> Option<(u64, u32, String)> {
        let value = load_state(&self.file(&server.name), server)?;
        let written = value.get("written").and_then(Value::as_u64)?;
        let failures = value
            .get("failures")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())?;
        let error = value.get("error").and_then(Value::as_str)?.to_string();
        Some((written, failures, error))
    }

    /// The failure of `server` while its back-off lasts.
    pub fn recent(&self, server: &ResolvedServer) -> Option<RememberedFailure> {
        let (written, failures, error) = self.read(server)?;
        let until = written.saturating_add(backoff(failures).as_secs());
        let now = now_secs();
        (now < until).then(|| RememberedFailure {
            failures,
            error,
            retry_in: until - now,
        })
    }

    /// Record a failure of `server` (one more in a row).
    pub fn record(&self, server: &ResolvedServer, error: &str) {
        let failures = self.read(server).map_or(1, |(_, n, _)| n.saturating_add(1));
        let value = json!({
            "key": listing_key(server),
            "written": now_secs(),
            "failures": failures,
            "error": error,
        });
        let what = "the MCP server's failure";
        save_state(&self.dir, &self.file(&server.name), &value, what);
    }

    /// Forget the failures of `server` (it connected).
    pub fn clear(&self, server: &str) {
        let _ = std::fs::remove_file(self.file(server));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::McpServerSettings;

    fn server(command: &str) -> ResolvedServer {
        let settings: McpServerSettings =
            toml::from_str(&format!("command = {command:?}")).unwrap();
        settings.resolve("s", &|_| None).unwrap()
    }

    #[test]
    fn backoff_doubles_up_to_an_hour() {
        let table = [(0, 60), (1, 60), (2, 120), (3, 240), (7, 3600), (40, 3600)];
        for (failures, secs) in table {
            assert_eq!(backoff(failures), Duration::from_secs(secs), "{failures}");
        }
    }

    #[test]
    fn a_failure_is_remembered_counted_and_cleared() {
        let dir = tempfile::tempdir().unwrap();
        let memory = FailureMemory::new(dir.path());
        let s = server("a");
        assert_eq!(memory.recent(&s), None);
        memory.record(&s, "timed out");
        memory.record(&s, "timed out again");
        let recent = memory.recent(&s).unwrap();
        assert_eq!(
            (recent.failures, recent.error.as_str()),
            (2, "timed out again")
        );
        assert!(recent.retry_in > 60 && recent.retry_in <= 120, "{recent:?}");
        memory.clear("s");
        assert_eq!(memory.recent(&s), None);
    }

    #[test]
    fn a_changed_section_forgets_the_failure() {
        let dir = tempfile::tempdir().unwrap();
        let memory = FailureMemory::new(dir.path());
        memory.record(&server("a"), "boom");
        assert_eq!(memory.recent(&server("b")), None);
    }

    #[test]
    fn an_expired_failure_is_not_used() {
        let dir = tempfile::tempdir().unwrap();
        let memory = FailureMemory::new(dir.path());
        let s = server("a");
        let value = json!({"key": listing_key(&s), "written": now_secs() - 61, "failures": 1, "error": "x"});
        std::fs::write(dir.path().join("s.failed.json"), value.to_string()).unwrap();
        assert_eq!(memory.recent(&s), None);
    }
}
