//! The per-server circuit breaker.
//!
//! After `threshold` consecutive failures of a server (it could not be reached, the
//! transport broke, a call timed out) the breaker opens: calls are refused at once with
//! a message telling the model not to retry, until `cooldown` has passed. The next call
//! after that is a trial (and may reconnect a dropped server); one more failure reopens
//! the breaker for another cooldown, a success closes it and resets the count.
//!
//! Only failures of the server count. A tool that answers with `isError` (bad
//! arguments, a file that does not exist) or a JSON-RPC error is a server that works.

use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
struct State {
    consecutive: u32,
    open_until: Option<Instant>,
}

/// One server's breaker.
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<State>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(threshold: u32, cooldown: Duration) -> Self {
        Breaker {
            threshold: threshold.max(1),
            cooldown,
            state: Mutex::new(State::default()),
        }
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `Err(remaining)` while open; `Ok(())` when a call may go ahead.
    pub fn check(&self) -> Result<(), Duration> {
        self.check_at(Instant::now())
    }

    fn check_at(&self, now: Instant) -> Result<(), Duration> {
        match self.state().open_until {
            Some(until) if now < until => Err(until - now),
            _ => Ok(()),
        }
    }

    /// The server answered.
    pub fn record_success(&self) {
        let mut state = self.state();
        state.consecutive = 0;
        state.open_until = None;
    }

    /// The server failed; returns true when this failure opened the breaker.
    pub fn record_failure(&self) -> bool {
        self.record_failure_at(Instant::now())
    }

    fn record_failure_at(&self, now: Instant) -> bool {
        let mut state = self.state();
        state.consecutive = state.consecutive.saturating_add(1);
        if state.consecutive >= self.threshold {
            state.open_until = Some(now + self.cooldown);
            true
        } else {
            false
        }
    }

    /// Consecutive failures so far.
    pub fn failures(&self) -> u32 {
        self.state().consecutive
    }

    /// True while calls are refused.
    pub fn is_open(&self) -> bool {
        self.check().is_err()
    }

    /// The model-facing refusal for `server`.
    pub fn open_message(&self, server: &str, remaining: Duration) -> String {
        format!(
            "MCP server '{server}' is unreachable after {} consecutive failures. Auto-retry available in ~{}s. Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server.",
            self.failures(),
            remaining.as_secs_f64().ceil() as u64
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_and_closes_after_cooldown() {
        let b = Breaker::new(3, Duration::from_secs(60));
        let t0 = Instant::now();
        assert!(!b.record_failure_at(t0));
        assert!(!b.record_failure_at(t0));
        assert!(b.check_at(t0).is_ok());
        assert!(b.record_failure_at(t0), "third failure opens");
        assert_eq!(
            b.check_at(t0 + Duration::from_secs(10)),
            Err(Duration::from_secs(50))
        );
        assert!(
            b.check_at(t0 + Duration::from_secs(60)).is_ok(),
            "half-open after cooldown"
        );
        // The trial fails: open again at once.
        assert!(b.record_failure_at(t0 + Duration::from_secs(61)));
        assert!(b.check_at(t0 + Duration::from_secs(62)).is_err());
    }

    #[test]
    fn success_resets() {
        let b = Breaker::new(3, Duration::from_secs(60));
        b.record_failure();
        b.record_failure();
        b.record_success();
        assert!(!b.record_failure());
        assert_eq!(b.failures(), 1);
    }

    #[test]
    fn message() {
        let b = Breaker::new(1, Duration::from_secs(60));
        b.record_failure();
        assert_eq!(
            b.open_message("github", Duration::from_millis(59_100)),
            "MCP server 'github' is unreachable after 1 consecutive failures. Auto-retry available in ~60s. Do NOT retry this tool yet — use alternative approaches or ask the user to check the MCP server."
        );
    }
}
