//! The hand-off slot between one caller and one worker: the job going in, the output
//! coming back, who waits for whom, and who gives the worker back to the pool.
//!
//! Every worker owns one slot and reuses it for every call it runs, so a call allocates
//! nothing here. The whole protocol is one atomic word of flags; the job, the output
//! and the waiter sit behind mutexes that the protocol guarantees are never contended
//! (each is touched by one side at a time), so they cost an uncontended lock each.
//!
//! ```text
//! submit:   caller puts the job, sets SUBMITTED (unparks the worker if SLEEPING)
//! run:      worker takes the job, runs it, puts the output, sets DONE
//! collect:  caller sees DONE, takes the output, sets CALLER_RELEASED
//! abandon:  caller (timeout, cancel, drop) sets ABANDONED|CALLER_RELEASED unless DONE
//! wait:     caller stores a waiter, sets WAITING; the worker wakes it after DONE
//! ```
//!
//! The worker sets WORKER_RELEASED together with DONE (it takes any waiter out first,
//! under the waiter's lock, and wakes it afterwards without touching the slot).
//! Whoever releases last resets the slot and returns the worker to the idle list — the
//! caller, unless it gave up — so a slot is never reused while either side still looks
//! at it, and a caller that submits again finds the same warm worker. SLEEPING belongs
//! to the worker's idle wait, not to the call, and survives the reset.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{OnceLock, PoisonError};
use std::task::Waker;

use super::sync::{self, Mutex, MutexGuard, Thread};
use super::{Job, JobPanicked, cpu};

/// A job is in the slot and the worker has not finished it.
const SUBMITTED: u32 = 1 << 0;
/// The output is in the slot.
const DONE: u32 = 1 << 1;
/// The caller stored a waiter: the worker must wake it after DONE.
const WAITING: u32 = 1 << 2;
/// The caller gave up; the worker owns the call from now on.
const ABANDONED: u32 = 1 << 3;
/// The worker will not touch this call again.
const WORKER_RELEASED: u32 = 1 << 4;
/// The caller will not touch this call again.
const CALLER_RELEASED: u32 = 1 << 5;
/// The worker is parked waiting for a job (not part of a call; survives the reset).
const SLEEPING: u32 = 1 << 6;

/// What a job produced, or the panic that stopped it.
pub type Output<J> = Result<<J as Job>::Output, JobPanicked>;

/// Who is parked waiting for a call's output.
pub(super) enum Waiter {
    /// A thread blocked in `Ticket::wait`.
    Thread(Thread),
    /// A task awaiting the ticket.
    Task(Waker),
}

impl Waiter {
    fn wake(self) {
        match self {
            Waiter::Thread(thread) => thread.unpark(),
            Waiter::Task(waker) => waker.wake(),
        }
    }
}

/// After the worker ran a job: what it still has to do.
pub(super) enum AfterRun {
    /// The caller will collect the output and recycle the worker.
    Handed,
    /// The caller had given up: the job finished late; the worker recycles itself.
    Late,
}

/// One worker's slot. See the module documentation for the protocol.
pub(super) struct Slot<J: Job> {
    state: sync::AtomicU32,
    /// Where the last caller submitted from, and where the worker last ran: each side
    /// spins only while the other is on another core.
    caller_cpu: AtomicU32,
    worker_cpu: AtomicU32,
    cancel: AtomicBool,
    job: Mutex<Option<J>>,
    output: Mutex<Option<Output<J>>>,
    waiter: Mutex<Option<Waiter>>,
    worker: OnceLock<Thread>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A job is waiting for the worker (and not an old call it already finished).
fn has_job(state: u32) -> bool {
    state & SUBMITTED != 0 && state & WORKER_RELEASED == 0
}

impl<J: Job> Slot<J> {
    /// A slot for a new worker, its first job already in.
    pub(super) fn with_job(job: J) -> Self {
        Slot {
            state: sync::AtomicU32::new(SUBMITTED),
            caller_cpu: AtomicU32::new(cpu::current()),
            worker_cpu: AtomicU32::new(cpu::UNKNOWN),
            cancel: AtomicBool::new(false),
            job: Mutex::new(Some(job)),
            output: Mutex::new(None),
            waiter: Mutex::new(None),
            worker: OnceLock::new(),
        }
    }

    // ----- caller side -----

    /// Hand `job` to this (idle) slot's worker.
    pub(super) fn submit(&self, job: J) {
        *lock(&self.job) = Some(job);
        self.caller_cpu.store(cpu::current(), Ordering::Relaxed);
        let before = self.state.fetch_or(SUBMITTED, Ordering::AcqRel);
        if before & SLEEPING != 0
            && let Some(worker) = self.worker.get()
        {
            worker.unpark();
        }
    }

    /// True once the output is in.
    pub(super) fn is_done(&self) -> bool {
        self.state.load(Ordering::Acquire) & DONE != 0
    }

    /// Take the output and the spent job (after [`Slot::is_done`]) and release the
    /// call; true when the caller released last and must recycle the worker. The job
    /// comes back so that it is dropped on the thread that built it.
    pub(super) fn collect(&self) -> (Output<J>, Option<J>, bool) {
        let output = lock(&self.output)
            .take()
            .unwrap_or_else(|| Err(JobPanicked("the call's output was lost".into())));
        let job = lock(&self.job).take();
        let before = self.state.fetch_or(CALLER_RELEASED, Ordering::AcqRel);
        (output, job, before & WORKER_RELEASED != 0)
    }

    /// Ask to be woken when the output is in; true when it already is (no wake comes).
    pub(super) fn register(&self, waiter: Waiter) -> bool {
        {
            let mut slot = lock(&self.waiter);
            let same_task = matches!((&*slot, &waiter),
                (Some(Waiter::Task(old)), Waiter::Task(new)) if old.will_wake(new));
            if !same_task {
                *slot = Some(waiter);
            }
        }
        self.state.fetch_or(WAITING, Ordering::AcqRel) & DONE != 0
    }

    /// Give up on the call: the job sees its cancel flag, and the worker owns the call
    /// from now on. False when the output was already in (the caller should collect).
    pub(super) fn abandon(&self) -> bool {
        self.cancel.store(true, Ordering::Release);
        let mut state = self.state.load(Ordering::Acquire);
        loop {
            if state & DONE != 0 {
                return false;
            }
            match self.state.compare_exchange_weak(
                state,
                state | ABANDONED | CALLER_RELEASED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => state = now,
            }
        }
    }

    // ----- worker side -----

    /// Record the worker's thread (once, before it first sleeps).
    pub(super) fn set_worker(&self, thread: Thread) {
        let _ = self.worker.set(thread);
    }

    /// True when a job is waiting.
    pub(super) fn job_ready(&self) -> bool {
        has_job(self.state.load(Ordering::Acquire))
    }

    /// Announce that the worker is about to park; false (and not sleeping) when a job
    /// arrived in the meantime.
    pub(super) fn start_sleeping(&self) -> bool {
        let before = self.state.fetch_or(SLEEPING, Ordering::AcqRel);
        if has_job(before) {
            self.state.fetch_and(!SLEEPING, Ordering::AcqRel);
            return false;
        }
        true
    }

    /// The worker is awake again.
    pub(super) fn stop_sleeping(&self) {
        self.state.fetch_and(!SLEEPING, Ordering::AcqRel);
    }

    /// Run the job in the slot (skipped when the caller gave up before it started) and
    /// hand the output over. The job stays in the slot for the caller to drop.
    pub(super) fn run(&self) -> AfterRun {
        self.worker_cpu.store(cpu::current(), Ordering::Relaxed);
        let output =
            {
                let mut job = lock(&self.job);
                match job.as_mut() {
                    // Cannot happen (SUBMITTED is only set with a job in).
                    None => Err(JobPanicked("no job in the slot".into())),
                    Some(_) if self.state.load(Ordering::Acquire) & ABANDONED != 0 => {
                        Err(JobPanicked("abandoned before it started".into()))
                    }
                    Some(job) => catch_unwind(AssertUnwindSafe(|| job.run(&self.cancel))).map_err(
                        |payload| JobPanicked(tools_core::availability::panic_message(&payload)),
                    ),
                }
            };
        self.finish(output)
    }

    /// After [`AfterRun::Late`]: tell the job, and drop it.
    pub(super) fn finish_late(&self) {
        if let Some(mut job) = lock(&self.job).take() {
            job.finished_late();
        }
    }

    /// Put the output in, set DONE and release the call in one step, so the caller
    /// (releasing second) always recycles the worker before it submits again. A waiter
    /// is taken out under its lock in that same step and woken after it.
    fn finish(&self, output: Output<J>) -> AfterRun {
        *lock(&self.output) = Some(output);
        let mut state = self.state.load(Ordering::Acquire);
        while state & (WAITING | ABANDONED) == 0 {
            match self.state.compare_exchange_weak(
                state,
                state | DONE | WORKER_RELEASED,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return AfterRun::Handed,
                Err(now) => state = now,
            }
        }
        // A waiter (or an abandonment): under the waiter lock, so that a waiter being
        // registered right now is either taken here or sees DONE and does not sleep.
        let (waiter, before) = {
            let mut waiter = lock(&self.waiter);
            let before = self
                .state
                .fetch_or(DONE | WORKER_RELEASED, Ordering::AcqRel);
            (waiter.take(), before)
        };
        if before & ABANDONED != 0 {
            // Nobody will collect it; drop it here, on the worker, which owns the slot.
            drop(lock(&self.output).take());
            return AfterRun::Late;
        }
        if let Some(waiter) = waiter {
            waiter.wake();
        }
        AfterRun::Handed
    }

    // ----- whoever released last -----

    /// Make the slot ready for the next call (both sides have released it).
    pub(super) fn reset(&self) {
        drop(lock(&self.waiter).take());
        drop(lock(&self.output).take());
        drop(lock(&self.job).take());
        self.cancel.store(false, Ordering::Release);
        self.state.fetch_and(SLEEPING, Ordering::AcqRel);
    }

    /// Where the last caller submitted from.
    pub(super) fn caller_cpu(&self) -> &AtomicU32 {
        &self.caller_cpu
    }

    /// Where the worker last ran; updated by the worker when it runs or spins.
    pub(super) fn worker_cpu(&self) -> &AtomicU32 {
        &self.worker_cpu
    }

    /// The worker's thread, to wake it.
    pub(super) fn worker(&self) -> Option<&Thread> {
        self.worker.get()
    }
}
