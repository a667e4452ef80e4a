//! Bounded spinning: wait for a condition another thread is about to make true, without
//! ever turning into an unbounded busy loop.
//!
//! A hand-off between two threads running on two cores costs a few hundred
//! nanoseconds; one that has to wake a parked thread costs a futex wake plus the
//! scheduler's latency (tens of microseconds on a loaded machine). Spinning for a short,
//! bounded time turns the common case into the cheap one. But when the thread we wait
//! for shares our core (the scheduler put both on one CPU, which happens whenever the
//! other cores are busy), spinning only delays it: then each check yields the core
//! instead, so the hand-off costs a context switch rather than a whole spin budget.
//! Each side publishes the CPU it runs on; the spin compares it with its own.

use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::cpu;

/// Pause hints between two checks while busy-waiting (a check reads a shared line).
const PAUSES_PER_CHECK: u32 = 8;

/// Check `ready` until it returns true or `budget` has passed; true when it did.
/// `peer_cpu` is where the thread that will make it true last ran
/// ([`cpu::UNKNOWN`] if not known): while it is this thread's CPU, each check yields.
///
/// Checks once even with a zero budget. CPU cost: at most `budget` of one core (plus a
/// clock read per check), much of it given away through `yield_now` when shared.
pub fn spin_until(budget: Duration, peer_cpu: &AtomicU32, mut ready: impl FnMut() -> bool) -> bool {
    if ready() {
        return true;
    }
    if budget.is_zero() {
        return false;
    }
    let started = Instant::now();
    loop {
        if started.elapsed() >= budget {
            return ready();
        }
        if cpu::shared_with(peer_cpu.load(Ordering::Relaxed)) {
            std::thread::yield_now();
        } else {
            for _ in 0..PAUSES_PER_CHECK {
                std::hint::spin_loop();
            }
        }
        if ready() {
            return true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;

    fn unknown() -> AtomicU32 {
        AtomicU32::new(cpu::UNKNOWN)
    }

    #[test]
    fn true_at_once_needs_no_budget() {
        assert!(spin_until(Duration::ZERO, &unknown(), || true));
    }

    #[test]
    fn gives_up_when_the_budget_is_spent() {
        assert!(!spin_until(Duration::from_micros(50), &unknown(), || false));
        assert!(!spin_until(Duration::ZERO, &unknown(), || false));
        // Sharing our own CPU: yields instead of spinning, still bounded.
        let here = AtomicU32::new(cpu::current());
        assert!(!spin_until(Duration::from_micros(50), &here, || false));
    }

    #[test]
    fn sees_a_flag_set_by_another_thread() {
        let flag = Arc::new(AtomicBool::new(false));
        let setter = {
            let flag = Arc::clone(&flag);
            std::thread::spawn(move || flag.store(true, Ordering::Release))
        };
        // Generous budget: the point is that the flag is seen, not how fast.
        assert!(spin_until(Duration::from_secs(30), &unknown(), || flag
            .load(Ordering::Acquire)));
        setter.join().unwrap();
    }
}
