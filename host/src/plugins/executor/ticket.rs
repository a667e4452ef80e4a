//! The caller's side of one submitted job: collect its output by spinning briefly, by
//! blocking with a deadline, or by awaiting it; or give up on it.
//!
//! Blocking waits spin for the executor's `caller_spin` first (a quick job is collected
//! without the caller ever sleeping), then park the thread until the output arrives,
//! the deadline passes or the cancellation token fires. Awaiting never blocks: the
//! future registers the task's waker and the worker wakes it. A ticket dropped before
//! its output was collected abandons the job (its cancel flag is raised and the worker
//! recycles itself when the job returns).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio_util::sync::CancellationToken;

use super::slot::{Output, Slot, Waiter};
use super::spin::spin_until;
use super::{Job, Shared};

/// How a blocking wait ended.
#[derive(Debug)]
pub enum Waited<T> {
    /// The job finished (or panicked).
    Done(T),
    /// The deadline passed first; the ticket is still live (abandon or keep waiting).
    TimedOut,
    /// The token fired first; the ticket is still live.
    Cancelled,
}

/// A job handed to a worker. Collect it once; dropping it unfinished abandons it.
pub struct Ticket<'a, J: Job> {
    shared: &'a Shared<J>,
    slot: Option<Arc<Slot<J>>>,
}

impl<J: Job> std::fmt::Debug for Ticket<'_, J> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ticket")
            .field("pending", &self.slot.is_some())
            .finish()
    }
}

/// Unparks a thread blocked in [`Ticket::wait`] when the cancellation token fires.
struct Unpark(super::sync::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

impl<'a, J: Job> Ticket<'a, J> {
    pub(super) fn new(shared: &'a Shared<J>, slot: Arc<Slot<J>>) -> Self {
        Ticket {
            shared,
            slot: Some(slot),
        }
    }

    /// The output, if the job has finished (then the ticket is spent).
    pub fn try_collect(&mut self) -> Option<Output<J>> {
        let slot = self.slot.as_ref()?;
        if !slot.is_done() {
            return None;
        }
        self.collect()
    }

    fn collect(&mut self) -> Option<Output<J>> {
        let slot = self.slot.take()?;
        let (output, job, last) = slot.collect();
        if last {
            self.shared.recycle(slot);
        }
        drop(job);
        Some(output)
    }

    /// Spin for up to `budget` for the output (see the `spin` module for the CPU cost).
    pub fn spin(&mut self, budget: Duration) -> Option<Output<J>> {
        let slot = self.slot.as_ref()?;
        if spin_until(budget, slot.worker_cpu(), || slot.is_done()) {
            self.collect()
        } else {
            None
        }
    }

    /// Block this thread until the output is in, `deadline` passes (`None`: never) or
    /// `cancel` fires. On a multi-thread tokio worker the blocking part runs under
    /// `block_in_place`, so the runtime keeps its other tasks moving.
    pub fn wait(
        &mut self,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Waited<Output<J>> {
        let budget = match deadline {
            Some(deadline) => self
                .shared
                .config
                .caller_spin
                .min(deadline.saturating_duration_since(Instant::now())),
            None => self.shared.config.caller_spin,
        };
        if let Some(output) = self.spin(budget) {
            return Waited::Done(output);
        }
        match Handle::try_current() {
            Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(|| self.park(deadline, cancel))
            }
            _ => self.park(deadline, cancel),
        }
    }

    fn park(
        &mut self,
        deadline: Option<Instant>,
        cancel: Option<&CancellationToken>,
    ) -> Waited<Output<J>> {
        let Some(slot) = self.slot.as_ref() else {
            return Waited::Done(Err(super::JobPanicked("collected twice".into())));
        };
        let me = super::sync::current();
        if slot.register(Waiter::Thread(me.clone())) {
            return self.done_or_lost();
        }
        // The token's future wakes this thread through its waker when it fires.
        let waker = Waker::from(Arc::new(Unpark(me)));
        let mut context = Context::from_waker(&waker);
        let mut cancelled = cancel.map(|token| Box::pin(token.cancelled()));
        loop {
            if let Some(output) = self.try_collect() {
                return Waited::Done(output);
            }
            if let Some(fired) = cancelled.as_mut()
                && fired.as_mut().poll(&mut context).is_ready()
            {
                return Waited::Cancelled;
            }
            match deadline {
                None => std::thread::park(),
                Some(deadline) => {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Waited::TimedOut;
                    }
                    std::thread::park_timeout(left);
                }
            }
        }
    }

    fn done_or_lost(&mut self) -> Waited<Output<J>> {
        Waited::Done(
            self.collect()
                .unwrap_or_else(|| Err(super::JobPanicked("collected twice".into()))),
        )
    }

    /// Give up on the job: its cancel flag is raised, and the worker finishes it
    /// without us. `Some(output)` when it had already finished (nothing was abandoned).
    pub fn abandon(&mut self) -> Option<Output<J>> {
        let slot = self.slot.as_ref()?;
        if slot.abandon() {
            self.slot = None;
            None
        } else {
            self.collect()
        }
    }

    /// True once the job has finished and its output waits to be collected.
    pub fn is_done(&self) -> bool {
        self.slot.as_ref().is_some_and(|slot| slot.is_done())
    }

    /// True until the output was collected or the job abandoned.
    pub fn is_pending(&self) -> bool {
        self.slot.is_some()
    }
}

impl<J: Job> Future for Ticket<'_, J> {
    type Output = Output<J>;

    /// Ready with the output; never blocks (after the output was taken, stays pending).
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        if let Some(output) = this.try_collect() {
            return Poll::Ready(output);
        }
        let Some(slot) = this.slot.as_ref() else {
            return Poll::Pending;
        };
        if slot.register(Waiter::Task(cx.waker().clone())) {
            return match this.collect() {
                Some(output) => Poll::Ready(output),
                None => Poll::Pending,
            };
        }
        Poll::Pending
    }
}

impl<J: Job> Drop for Ticket<'_, J> {
    fn drop(&mut self) {
        // An output nobody collected is dropped here; an unfinished job is abandoned.
        drop(self.abandon());
    }
}
