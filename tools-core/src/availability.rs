//! Availability checks: is a tool usable right now (binary present, key set, server up)?
//!
//! A check's verdict is cached for [`CHECK_TTL`]. A failure within [`FLAKE_GRACE`] of
//! the last success still counts as available and is not cached (a flaky probe must not
//! make tools vanish for a whole turn). A probe that panics or errors means
//! "unavailable" — never a crash. Several tools may share one check (`Arc`); one
//! [`AvailabilityPass`] runs each shared check at most once.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// How long a verdict is reused.
pub const CHECK_TTL: Duration = Duration::from_secs(30);
/// A failure this soon after a success is treated as a flake.
pub const FLAKE_GRACE: Duration = Duration::from_secs(60);

/// The verdict of a check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Availability {
    /// Whether dependent tools are offered to the model.
    pub available: bool,
    /// Why not (or why it still counts as available), for `toolhost tools`.
    pub reason: Option<String>,
}

impl Availability {
    /// Available, nothing to say.
    pub const fn yes() -> Self {
        Availability {
            available: true,
            reason: None,
        }
    }

    /// Unavailable because of `reason`.
    pub fn no(reason: impl Into<String>) -> Self {
        Availability {
            available: false,
            reason: Some(reason.into()),
        }
    }
}

type ProbeFn = dyn Fn() -> Result<(), String> + Send + Sync;

#[derive(Default)]
struct CacheState {
    cached: Option<(Instant, Availability)>,
    last_success: Option<Instant>,
}

/// A named probe with its cache. Share it between tools with `Arc`.
pub struct AvailabilityCheck {
    name: String,
    probe: Box<ProbeFn>,
    state: Mutex<CacheState>,
}

impl std::fmt::Debug for AvailabilityCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AvailabilityCheck")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl AvailabilityCheck {
    /// A check named `name`; the probe returns `Err(reason)` when the tool cannot run.
    pub fn new<F>(name: impl Into<String>, probe: F) -> Arc<Self>
    where
        F: Fn() -> Result<(), String> + Send + Sync + 'static,
    {
        Arc::new(AvailabilityCheck {
            name: name.into(),
            probe: Box::new(probe),
            state: Mutex::new(CacheState::default()),
        })
    }

    /// The check's name (shown in diagnostics).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The verdict now, from the cache when fresh.
    pub fn evaluate(&self) -> Availability {
        self.evaluate_at(Instant::now())
    }

    /// Forget the cached verdict and the last success.
    pub fn invalidate(&self) {
        *self.lock() = CacheState::default();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, CacheState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// [`evaluate`](Self::evaluate) with an explicit clock, for tests.
    pub fn evaluate_at(&self, now: Instant) -> Availability {
        if let Some((at, verdict)) = &self.lock().cached
            && now.saturating_duration_since(*at) < CHECK_TTL
        {
            return verdict.clone();
        }
        // The probe runs outside the lock: it may be slow, and two threads probing at
        // once is harmless.
        let outcome = match catch_unwind(AssertUnwindSafe(|| (self.probe)())) {
            Ok(result) => result,
            Err(panic) => Err(format!("check panicked: {}", panic_message(&panic))),
        };
        let mut state = self.lock();
        match outcome {
            Ok(()) => {
                state.last_success = Some(now);
                state.cached = Some((now, Availability::yes()));
                Availability::yes()
            }
            Err(reason) => {
                let recent_success = state
                    .last_success
                    .is_some_and(|ok| now.saturating_duration_since(ok) < FLAKE_GRACE);
                if recent_success {
                    tracing::warn!(check = %self.name, %reason, "availability check failed shortly after succeeding; treating it as a flake");
                    Availability {
                        available: true,
                        reason: Some(format!("flaky: {reason}")),
                    }
                } else {
                    tracing::debug!(check = %self.name, %reason, "availability check failed; dependent tools are unavailable");
                    let verdict = Availability::no(reason);
                    state.cached = Some((now, verdict.clone()));
                    verdict
                }
            }
        }
    }
}

/// Turn a caught panic payload into text.
pub fn panic_message(payload: &Box<dyn std::any::Any + Send>) -> String {
    // Deref the box: downcasting the `Box` itself would never match.
    let payload: &(dyn std::any::Any + Send) = &**payload;
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

/// One definitions pass: each shared check is evaluated at most once.
#[derive(Default)]
pub struct AvailabilityPass {
    seen: HashMap<*const AvailabilityCheck, Availability>,
}

impl AvailabilityPass {
    /// A fresh pass.
    pub fn new() -> Self {
        Self::default()
    }

    /// The verdict for `check` (or available when there is no check).
    pub fn evaluate(&mut self, check: Option<&Arc<AvailabilityCheck>>) -> Availability {
        let Some(check) = check else {
            return Availability::yes();
        };
        self.seen
            .entry(Arc::as_ptr(check))
            .or_insert_with(|| check.evaluate())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    fn counting(ok: Arc<AtomicBool>, calls: Arc<AtomicUsize>) -> Arc<AvailabilityCheck> {
        AvailabilityCheck::new("test", move || {
            calls.fetch_add(1, Ordering::SeqCst);
            if ok.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("down".into())
            }
        })
    }

    #[test]
    fn verdict_is_cached_within_ttl() {
        let (ok, calls) = (
            Arc::new(AtomicBool::new(false)),
            Arc::new(AtomicUsize::new(0)),
        );
        let check = counting(ok, calls.clone());
        let t0 = Instant::now();
        assert!(!check.evaluate_at(t0).available);
        assert!(!check.evaluate_at(t0 + Duration::from_secs(29)).available);
        assert_eq!(calls.load(Ordering::SeqCst), 1);
        check.evaluate_at(t0 + Duration::from_secs(31));
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn failure_soon_after_success_is_a_flake_and_not_cached() {
        let (ok, calls) = (
            Arc::new(AtomicBool::new(true)),
            Arc::new(AtomicUsize::new(0)),
        );
        let check = counting(ok.clone(), calls.clone());
        let t0 = Instant::now();
        assert!(check.evaluate_at(t0).available);
        ok.store(false, Ordering::SeqCst);
        let later = t0 + Duration::from_secs(40);
        let verdict = check.evaluate_at(later);
        assert!(verdict.available);
        assert!(verdict.reason.unwrap_or_default().contains("flaky"));
        // Not cached: the next evaluation probes again.
        check.evaluate_at(later);
        assert_eq!(calls.load(Ordering::SeqCst), 3);
        // Past the grace the failure sticks.
        assert!(!check.evaluate_at(t0 + Duration::from_secs(61)).available);
    }

    #[test]
    fn panicking_probe_means_unavailable() {
        let check = AvailabilityCheck::new("boom", || panic!("probe exploded"));
        let verdict = check.evaluate();
        assert!(!verdict.available);
        assert!(
            verdict
                .reason
                .unwrap_or_default()
                .contains("probe exploded")
        );
    }

    #[test]
    fn shared_check_runs_once_per_pass() {
        let (ok, calls) = (
            Arc::new(AtomicBool::new(true)),
            Arc::new(AtomicUsize::new(0)),
        );
        let check = counting(ok, calls.clone());
        check.invalidate();
        let mut pass = AvailabilityPass::new();
        for _ in 0..5 {
            assert!(pass.evaluate(Some(&check)).available);
        }
        assert_eq!(calls.load(Ordering::SeqCst), 1);
    }
}
