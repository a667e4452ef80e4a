//! The plugin executor: a small pool of threads that run synchronous plugin handlers off
//! the caller's thread, so a call can time out while its handler keeps running.
//!
//! # Why not tokio's blocking pool
//!
//! A timeout on a synchronous handler needs a second thread: the caller must be able to
//! answer "timed out" while the handler still runs. Handing every call to
//! `spawn_blocking` costs a queue push, a futex wake, the scheduler's latency to run the
//! woken thread, and the same again on the way back — 65–95 µs per no-op call on the
//! loaded 2-core development machine, fifty times the call itself. This pool makes the
//! common hand-off cheap instead of rare:
//!
//! - **Warm workers spin.** A worker that finishes a job waits for the next one by
//!   spinning for [`ExecutorOptions::worker_spin`] (tens of µs) before it parks; a call
//!   that arrives meanwhile is picked up in a few hundred nanoseconds, with no syscall.
//! - **Callers spin.** The caller waits for the output by spinning for
//!   [`ExecutorOptions::caller_spin`] before parking with its deadline, so a quick
//!   handler's answer is collected without the caller ever sleeping.
//! - **One slot per worker, no allocation.** Idle workers sit on a LIFO stack (the most
//!   recently used, still spinning worker is handed the next call); each owns a
//!   `slot` that carries the job in and the output back under a single atomic
//!   word of flags. The stack's mutex is held for a push or a pop only.
//! - **Timeouts never wait for the worker.** A caller that gives up (deadline,
//!   cancellation, dropped future) raises the job's cancel flag and leaves; the worker
//!   stays busy until the handler returns, then tells the job (so the plugin can stop
//!   counting it as hung) and returns itself to the pool. Meanwhile new calls get other
//!   workers: the pool grows on demand up to [`ExecutorOptions::max_workers`].
//!
//! - **Two threads on one core take turns.** When the scheduler puts caller and worker on
//!   the same CPU (it does whenever the other cores are busy), spinning would only burn
//!   the time the other side needs: both sides publish their CPU in the slot and, while
//!   they share one, each check yields the core instead (a hand-off then costs two
//!   context switches, ~5 µs on the development VM). A worker that finds itself on its
//!   caller's CPU after a job also steps aside — it narrows its affinity to the other
//!   allowed CPUs and restores it at once, which moves it without pinning it — at most
//!   once per millisecond, so the next calls overlap again. A process restricted to
//!   one CPU never steps aside.
//!
//! # CPU cost
//!
//! Spinning trades CPU time for latency, so it is bounded everywhere: a worker spins at
//! most `worker_spin` (50 µs) after its last job, at most
//! [`ExecutorOptions::max_spinning`] workers spin at once (one per core beyond the
//! caller's; the rest park immediately), and a blocked caller spins at most
//! `caller_spin` (20 µs), an async caller 3 µs. An idle executor costs nothing: its
//! workers are parked, and a worker idle for [`ExecutorOptions::keep_alive`] exits. Under
//! a steady stream of calls one worker spins between them, so a caller in a tight loop
//! keeps about two cores busy — that is the price of a 1–2 µs hand-off. The worst case
//! per call is a trickle of calls spaced just beyond the spin window: each then costs
//! one spin window of one core (≈ 50 µs) on top of its own run time, i.e. at most 5 % of
//! a core at 1 000 calls per second. Set `[plugins] timeout_secs = 0` for a plugin to
//! run its handlers inline instead (no thread, no spin, no timeout).

mod cpu;
mod slot;
mod spin;
mod sync;
mod ticket;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

pub use slot::Output;
use slot::{AfterRun, Slot};
use spin::spin_until;
pub use ticket::{Ticket, Waited};

/// Work run on an executor thread.
pub trait Job: Send + 'static {
    /// What the job produces.
    type Output: Send + 'static;

    /// Run on a worker. `cancel` becomes true when the caller gives up on the call;
    /// long jobs should pass it on (plugins see it as `ctx.is_cancelled()`).
    fn run(&mut self, cancel: &std::sync::atomic::AtomicBool) -> Self::Output;

    /// Called on the worker when a job whose caller gave up has returned (or was
    /// skipped because the caller gave up before it started).
    fn finished_late(&mut self) {}
}

/// A job panicked on the worker (the message); the worker itself carries on.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct JobPanicked(pub String);

/// Why a job could not be handed to a worker.
#[derive(Debug, thiserror::Error)]
pub enum SubmitError {
    /// Every worker is busy and the pool is at its size limit.
    #[error("all {0} {1} threads are busy")]
    Saturated(usize, String),
    /// The operating system refused a new thread.
    #[error("cannot start a {name} thread: {source}")]
    Spawn {
        /// The executor's thread name.
        name: String,
        /// The error from the OS.
        #[source]
        source: std::io::Error,
    },
}

/// Sizes and spin budgets of an executor.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecutorOptions {
    /// Thread name of the workers.
    pub name: String,
    /// Most worker threads alive at once (busy, hung or idle).
    pub max_workers: usize,
    /// How long an idle worker spins for its next job before it parks.
    pub worker_spin: Duration,
    /// Most idle workers spinning at once; the others park at once.
    pub max_spinning: usize,
    /// How long a blocked caller spins for the output before it parks.
    pub caller_spin: Duration,
    /// How long a parked idle worker lives before its thread exits.
    pub keep_alive: Duration,
}

impl ExecutorOptions {
    /// The plugin executor's settings: 50 µs of worker spin, 20 µs of caller spin, at
    /// most one spinning worker per core beyond the caller's (one on a 2-core machine),
    /// 512 threads (tokio's blocking pool limit), idle threads exit after 10 s.
    pub fn plugin_calls() -> Self {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        ExecutorOptions {
            name: "toolhost-plugin".into(),
            max_workers: 512,
            worker_spin: Duration::from_micros(50),
            max_spinning: cores.saturating_sub(1).max(1),
            caller_spin: Duration::from_micros(20),
            keep_alive: Duration::from_secs(10),
        }
    }
}

/// State shared by the executor handle, its tickets and its workers.
pub struct Shared<J: Job> {
    config: ExecutorOptions,
    /// Idle workers, most recently used last.
    idle: Mutex<Vec<Arc<Slot<J>>>>,
    /// Worker threads alive.
    workers: AtomicUsize,
    /// Idle workers spinning right now.
    spinning: AtomicUsize,
    /// The executor handle was dropped: idle workers exit.
    shut_down: AtomicBool,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl<J: Job> Shared<J> {
    /// Reset `slot` and put its worker back on the idle stack.
    fn recycle(&self, slot: Arc<Slot<J>>) {
        slot.reset();
        let shut_down = self.shut_down.load(Ordering::Acquire);
        let worker = shut_down.then(|| slot.worker().cloned()).flatten();
        lock(&self.idle).push(slot);
        // After shutdown nobody submits again: wake the worker so it can exit.
        if let Some(worker) = worker {
            worker.unpark();
        }
    }

    /// Take `slot` off the idle stack for good; false when it is not there (a caller
    /// popped it and a job is on its way, or its last call is not recycled yet).
    fn retire(&self, slot: &Arc<Slot<J>>) -> bool {
        let mut idle = lock(&self.idle);
        match idle.iter().position(|s| Arc::ptr_eq(s, slot)) {
            Some(at) => {
                idle.remove(at);
                true
            }
            None => false,
        }
    }
}

/// A pool of worker threads running [`Job`]s; see the module documentation.
pub struct Executor<J: Job> {
    shared: Arc<Shared<J>>,
}

impl<J: Job> std::fmt::Debug for Executor<J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Executor")
            .field("name", &self.shared.config.name)
            .field("workers", &self.workers())
            .field("idle", &self.idle_workers())
            .finish()
    }
}

impl<J: Job> Executor<J> {
    /// An executor with no threads yet (they start on demand).
    pub fn new(config: ExecutorOptions) -> Self {
        Executor {
            shared: Arc::new(Shared {
                config,
                idle: Mutex::new(Vec::new()),
                workers: AtomicUsize::new(0),
                spinning: AtomicUsize::new(0),
                shut_down: AtomicBool::new(false),
            }),
        }
    }

    /// The settings in force.
    pub fn config(&self) -> &ExecutorOptions {
        &self.shared.config
    }

    /// Worker threads alive (busy, hung or idle).
    pub fn workers(&self) -> usize {
        self.shared.workers.load(Ordering::Acquire)
    }

    /// Workers waiting for a job.
    pub fn idle_workers(&self) -> usize {
        lock(&self.shared.idle).len()
    }

    /// Hand `job` to an idle worker, or to a new one.
    pub fn submit(&self, job: J) -> Result<Ticket<'_, J>, SubmitError> {
        let idle = lock(&self.shared.idle).pop();
        let slot = match idle {
            Some(slot) => {
                slot.submit(job);
                slot
            }
            None => self.spawn(job)?,
        };
        Ok(Ticket::new(&self.shared, slot))
    }

    fn spawn(&self, job: J) -> Result<Arc<Slot<J>>, SubmitError> {
        let shared = &self.shared;
        let max = shared.config.max_workers;
        if shared.workers.fetch_add(1, Ordering::AcqRel) >= max {
            shared.workers.fetch_sub(1, Ordering::AcqRel);
            return Err(SubmitError::Saturated(max, shared.config.name.clone()));
        }
        let slot = Arc::new(Slot::with_job(job));
        let (worker_shared, worker_slot) = (Arc::clone(shared), Arc::clone(&slot));
        let spawned = std::thread::Builder::new()
            .name(shared.config.name.clone())
            .spawn(move || work(&worker_shared, &worker_slot));
        match spawned {
            Ok(_) => Ok(slot),
            Err(source) => {
                shared.workers.fetch_sub(1, Ordering::AcqRel);
                Err(SubmitError::Spawn {
                    name: shared.config.name.clone(),
                    source,
                })
            }
        }
    }
}

impl<J: Job> Drop for Executor<J> {
    /// Idle workers exit now; busy ones when their job returns.
    fn drop(&mut self) {
        self.shared.shut_down.store(true, Ordering::Release);
        for slot in lock(&self.shared.idle).iter() {
            if let Some(worker) = slot.worker() {
                worker.unpark();
            }
        }
    }
}

/// A worker moves off its caller's CPU at most this often (see [`next_job`]).
const STEP_ASIDE_EVERY: Duration = Duration::from_millis(1);

/// Counts the thread out of the pool however it ends.
struct Alive<'a>(&'a AtomicUsize);

impl Drop for Alive<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A worker thread: run the job in the slot, wait for the next, until retired.
fn work<J: Job>(shared: &Shared<J>, slot: &Arc<Slot<J>>) {
    let _alive = Alive(&shared.workers);
    slot.set_worker(sync::current());
    let mut stepped_aside: Option<Instant> = None;
    loop {
        match slot.run() {
            AfterRun::Handed => {}
            AfterRun::Late => {
                slot.finish_late();
                shared.recycle(Arc::clone(slot));
            }
        }
        if !next_job(shared, slot, &mut stepped_aside) {
            return;
        }
    }
}

/// Wait for the next job: spin (if few others are), then park. False when the worker
/// should exit (idle for `keep_alive`, or the executor is gone, and off the idle stack).
fn next_job<J: Job>(
    shared: &Shared<J>,
    slot: &Arc<Slot<J>>,
    stepped_aside: &mut Option<Instant>,
) -> bool {
    let config = &shared.config;
    if shared.spinning.fetch_add(1, Ordering::AcqRel) < config.max_spinning {
        // Sharing the caller's CPU, the two can only take turns: each hand-off becomes
        // a context switch (~2 µs here). Moving to another CPU, even a busy one, lets
        // them overlap again. Done after the job, off the caller's critical path.
        if cpu::shared_with(slot.caller_cpu().load(Ordering::Relaxed))
            && stepped_aside.is_none_or(|at| at.elapsed() >= STEP_ASIDE_EVERY)
        {
            cpu::step_aside();
            *stepped_aside = Some(Instant::now());
        }
        slot.worker_cpu().store(cpu::current(), Ordering::Relaxed);
        let ready = spin_until(config.worker_spin, slot.caller_cpu(), || slot.job_ready());
        shared.spinning.fetch_sub(1, Ordering::AcqRel);
        if ready {
            return true;
        }
    } else {
        shared.spinning.fetch_sub(1, Ordering::AcqRel);
    }
    let mut idle_since = Instant::now();
    loop {
        let shut_down = shared.shut_down.load(Ordering::Acquire);
        if shut_down || idle_since.elapsed() >= config.keep_alive {
            if shared.retire(slot) {
                return false;
            }
            // A caller popped us (its job is on the way) or our last call is not
            // recycled yet: wait on.
            idle_since = Instant::now();
        }
        if slot.start_sleeping() {
            // After a shutdown the recycle wakes us; the short limit is a safety net.
            let limit = if shut_down {
                Duration::from_millis(50)
            } else {
                config.keep_alive.saturating_sub(idle_since.elapsed())
            };
            std::thread::park_timeout(limit);
            slot.stop_sleeping();
        }
        if slot.job_ready() {
            return true;
        }
    }
}

#[cfg(all(test, toolhost_loom))]
#[path = "loom_tests.rs"]
mod loom_tests;
#[cfg(test)]
#[path = "tests.rs"]
mod tests;
