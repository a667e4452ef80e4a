//! Loom models of the slot hand-off (`slot.rs`): a caller and a worker run each protocol
//! step — submit, run, wait, collect, abandon, sleep and wake — under every interleaving
//! loom explores, and each model checks that the output arrives exactly once, that
//! exactly one side recycles the worker, that an abandoned call is finished late by the
//! worker, and that nobody sleeps through a wake-up (loom fails a model that deadlocks).
//!
//! These run only in a build with `--cfg toolhost_loom` (see docs/testing.md):
//! `RUSTFLAGS="--cfg toolhost_loom" CARGO_TARGET_DIR=target/loom cargo test --release
//! -p toolhost --lib plugins::executor::loom_tests`.

use std::sync::Arc as StdArc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use loom::sync::Arc;
use loom::thread;

use super::Job;
use super::slot::{AfterRun, Slot, Waiter};

/// Counts what happened to the jobs and outputs of one model run.
#[derive(Clone, Default)]
struct Counters {
    ran: StdArc<AtomicUsize>,
    late: StdArc<AtomicUsize>,
    dropped: StdArc<AtomicUsize>,
}

impl Counters {
    fn get(counter: &StdArc<AtomicUsize>) -> usize {
        counter.load(Ordering::SeqCst)
    }
}

/// An output that counts its own drop, so a lost or doubled output shows.
struct Counted(u64, StdArc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

struct Probe {
    value: u64,
    counters: Counters,
}

impl Job for Probe {
    type Output = Counted;

    fn run(&mut self, _cancel: &AtomicBool) -> Counted {
        self.counters.ran.fetch_add(1, Ordering::SeqCst);
        Counted(self.value, StdArc::clone(&self.counters.dropped))
    }

    fn finished_late(&mut self) {
        self.counters.late.fetch_add(1, Ordering::SeqCst);
    }
}

fn probe(value: u64, counters: &Counters) -> Probe {
    Probe {
        value,
        counters: counters.clone(),
    }
}

fn model(test: impl Fn() + Sync + Send + 'static) {
    let mut builder = loom::model::Builder::new();
    builder.preemption_bound = Some(3);
    builder.check(test);
}

/// What a blocked caller does: register as the waiter, then park until the output is in.
fn wait_done(slot: &Slot<Probe>) {
    if slot.register(Waiter::Thread(thread::current())) {
        return;
    }
    while !slot.is_done() {
        thread::park();
    }
}

/// Collect the finished call: the value, and whether the caller must recycle.
fn collect(slot: &Slot<Probe>) -> (Option<u64>, bool) {
    let (output, job, recycle) = slot.collect();
    drop(job);
    (output.ok().map(|counted| counted.0), recycle)
}

#[test]
fn the_output_reaches_a_waiting_caller_and_the_caller_recycles() {
    model(|| {
        let counters = Counters::default();
        let slot = Arc::new(Slot::with_job(probe(7, &counters)));
        let worker = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || {
                slot.set_worker(thread::current());
                matches!(slot.run(), AfterRun::Handed)
            })
        };
        wait_done(&slot);
        assert_eq!(collect(&slot), (Some(7), true));
        assert!(worker.join().unwrap());
        assert_eq!(Counters::get(&counters.ran), 1);
        assert_eq!(Counters::get(&counters.dropped), 1);
        assert_eq!(Counters::get(&counters.late), 0);
    });
}

#[test]
fn an_abandoned_call_is_finished_late_by_the_worker_exactly_when_the_caller_gave_up() {
    model(|| {
        let counters = Counters::default();
        let slot = Arc::new(Slot::with_job(probe(1, &counters)));
        let worker = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || match slot.run() {
                AfterRun::Late => {
                    slot.finish_late();
                    true
                }
                AfterRun::Handed => false,
            })
        };
        let gave_up = slot.abandon();
        if !gave_up {
            assert!(slot.is_done());
            assert_eq!(collect(&slot), (Some(1), true));
        }
        let finished_late = worker.join().unwrap();
        assert_eq!(gave_up, finished_late);
        assert_eq!(Counters::get(&counters.late), usize::from(gave_up));
        // Whatever ran produced one output, and it was dropped exactly once.
        assert_eq!(
            Counters::get(&counters.dropped),
            Counters::get(&counters.ran)
        );
    });
}

#[test]
fn a_caller_that_registers_then_times_out_never_loses_the_output() {
    model(|| {
        let counters = Counters::default();
        let slot = Arc::new(Slot::with_job(probe(2, &counters)));
        let worker = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || match slot.run() {
                AfterRun::Late => {
                    slot.finish_late();
                    true
                }
                AfterRun::Handed => false,
            })
        };
        let already_done = slot.register(Waiter::Thread(thread::current()));
        let gave_up = !already_done && slot.abandon();
        if !gave_up {
            assert_eq!(collect(&slot), (Some(2), true));
        }
        assert_eq!(worker.join().unwrap(), gave_up);
        assert_eq!(
            Counters::get(&counters.dropped),
            Counters::get(&counters.ran)
        );
    });
}

#[test]
fn a_job_submitted_while_the_worker_falls_asleep_wakes_it() {
    model(|| {
        let counters = Counters::default();
        let slot = Arc::new(Slot::with_job(probe(1, &counters)));
        let worker = {
            let slot = Arc::clone(&slot);
            thread::spawn(move || {
                slot.set_worker(thread::current());
                assert!(matches!(slot.run(), AfterRun::Handed));
                // The worker's idle wait (no spinning in the model).
                loop {
                    if slot.start_sleeping() {
                        thread::park();
                        slot.stop_sleeping();
                    }
                    if slot.job_ready() {
                        break;
                    }
                }
                assert!(matches!(slot.run(), AfterRun::Handed));
            })
        };
        wait_done(&slot);
        assert_eq!(collect(&slot), (Some(1), true));
        slot.reset();
        slot.submit(probe(2, &counters));
        wait_done(&slot);
        assert_eq!(collect(&slot), (Some(2), true));
        worker.join().unwrap();
        assert_eq!(Counters::get(&counters.ran), 2);
    });
}
