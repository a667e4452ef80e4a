//! The executor on real threads: outputs, timeouts, cancellation, panics, abandoned
//! jobs, many callers, async callers, and idle workers going away. No timing
//! assertions: waits that could hang are bounded by generous guards only.

use super::*;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Fails the test instead of hanging it.
const GUARD: Duration = Duration::from_secs(60);

type Work = Box<dyn FnOnce(&AtomicBool) -> u64 + Send>;

/// A job running a closure; counts late finishes.
struct TestJob {
    work: Option<Work>,
    late: Arc<AtomicUsize>,
}

impl Job for TestJob {
    type Output = u64;

    fn run(&mut self, cancel: &AtomicBool) -> u64 {
        self.work.take().map_or(0, |work| work(cancel))
    }

    fn finished_late(&mut self) {
        self.late.fetch_add(1, Ordering::AcqRel);
    }
}

fn config() -> ExecutorOptions {
    ExecutorOptions {
        name: "test-executor".into(),
        ..ExecutorOptions::plugin_calls()
    }
}

struct Harness {
    executor: Executor<TestJob>,
    late: Arc<AtomicUsize>,
}

impl Harness {
    fn new(config: ExecutorOptions) -> Self {
        Harness {
            executor: Executor::new(config),
            late: Arc::new(AtomicUsize::new(0)),
        }
    }

    fn submit(
        &self,
        work: impl FnOnce(&AtomicBool) -> u64 + Send + 'static,
    ) -> Ticket<'_, TestJob> {
        self.executor
            .submit(TestJob {
                work: Some(Box::new(work)),
                late: Arc::clone(&self.late),
            })
            .unwrap()
    }

    fn wait_for_late(&self, count: usize) {
        wait_until("late finishes", || {
            self.late.load(Ordering::Acquire) >= count
        });
    }
}

fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let started = Instant::now();
    while !done() {
        assert!(started.elapsed() < GUARD, "gave up waiting for {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn done(waited: Waited<Output<TestJob>>) -> Output<TestJob> {
    match waited {
        Waited::Done(output) => output,
        other => panic!("expected an output, got {other:?}"),
    }
}

#[test]
fn a_job_runs_on_a_worker_and_its_output_comes_back() {
    let h = Harness::new(config());
    let caller = std::thread::current().id();
    let mut ticket = h.submit(move |_| u64::from(std::thread::current().id() != caller));
    assert_eq!(done(ticket.wait(None, None)), Ok(1));
    assert!(!ticket.is_pending());
}

#[test]
fn a_warm_worker_is_reused() {
    let h = Harness::new(config());
    for i in 0..100 {
        assert_eq!(done(h.submit(move |_| i).wait(None, None)), Ok(i));
    }
    // Sequential calls never needed a second thread.
    assert_eq!(h.executor.workers(), 1);
}

#[test]
fn many_concurrent_callers_each_get_their_own_output() {
    let h = Harness::new(config());
    std::thread::scope(|scope| {
        for caller in 0..16u64 {
            let h = &h;
            scope.spawn(move || {
                for call in 0..300u64 {
                    let input = caller * 1_000 + call;
                    let output = if call % 3 == 0 {
                        // Some callers park, some spin, some answer slowly.
                        h.submit(move |_| {
                            std::thread::yield_now();
                            input * 2
                        })
                        .wait(Some(Instant::now() + GUARD), None)
                    } else {
                        h.submit(move |_| input * 2).wait(None, None)
                    };
                    assert_eq!(done(output), Ok(input * 2));
                }
            });
        }
    });
    assert_eq!(h.late.load(Ordering::Acquire), 0);
}

#[test]
fn a_slow_job_times_out_and_releases_its_caller() {
    let h = Harness::new(config());
    let (release, stuck) = mpsc::channel::<()>();
    let (started, has_started) = mpsc::channel();
    let mut ticket = h.submit(move |_| {
        let _ = started.send(());
        // Ignores its cancel flag: only the test lets it go.
        let _ = stuck.recv();
        7
    });
    has_started.recv_timeout(GUARD).unwrap();
    let waited = ticket.wait(Some(Instant::now() + Duration::from_millis(50)), None);
    assert!(matches!(waited, Waited::TimedOut), "{waited:?}");
    assert!(ticket.abandon().is_none());
    // The stuck worker does not hold anyone up: the next job gets another worker.
    assert_eq!(done(h.submit(|_| 8).wait(None, None)), Ok(8));
    assert_eq!(h.late.load(Ordering::Acquire), 0);
    release.send(()).unwrap();
    h.wait_for_late(1);
}

#[test]
fn giving_up_raises_the_jobs_cancel_flag() {
    let h = Harness::new(config());
    let (saw_cancel, seen) = mpsc::channel();
    let (started, has_started) = mpsc::channel();
    let mut ticket = h.submit(move |cancel| {
        let _ = started.send(());
        while !cancel.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = saw_cancel.send(());
        1
    });
    has_started.recv_timeout(GUARD).unwrap();
    let waited = ticket.wait(Some(Instant::now() + Duration::from_millis(20)), None);
    assert!(matches!(waited, Waited::TimedOut), "{waited:?}");
    assert!(ticket.abandon().is_none());
    seen.recv_timeout(GUARD).unwrap();
    h.wait_for_late(1);
}

#[test]
fn a_cancellation_token_releases_a_blocked_caller() {
    let h = Harness::new(config());
    let token = CancellationToken::new();
    let mut ticket = h.submit(|cancel| {
        while !cancel.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        2
    });
    let canceller = {
        let token = token.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(30));
            token.cancel();
        })
    };
    let waited = ticket.wait(None, Some(&token));
    assert!(matches!(waited, Waited::Cancelled), "{waited:?}");
    assert!(ticket.abandon().is_none());
    canceller.join().unwrap();
    h.wait_for_late(1);
}

#[test]
fn a_cancelled_token_stops_the_wait_at_once() {
    let h = Harness::new(config());
    let token = CancellationToken::new();
    token.cancel();
    let (release, stuck) = mpsc::channel::<()>();
    let mut ticket = h.submit(move |_| {
        let _ = stuck.recv();
        3
    });
    assert!(matches!(ticket.wait(None, Some(&token)), Waited::Cancelled));
    drop(ticket);
    // The job may have been skipped (abandoned before it started): then nobody listens.
    let _ = release.send(());
    h.wait_for_late(1);
}

#[test]
fn a_panicking_job_is_contained_and_the_worker_carries_on() {
    let h = Harness::new(config());
    let output = done(h.submit(|_| panic!("job exploded")).wait(None, None));
    assert_eq!(output, Err(JobPanicked("job exploded".into())));
    assert_eq!(done(h.submit(|_| 5).wait(None, None)), Ok(5));
    assert_eq!(h.executor.workers(), 1);
}

#[test]
fn dropping_a_ticket_abandons_its_job() {
    let h = Harness::new(config());
    let (saw_cancel, seen) = mpsc::channel();
    let (started, has_started) = mpsc::channel();
    let ticket = h.submit(move |cancel| {
        let _ = started.send(());
        while !cancel.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = saw_cancel.send(());
        4
    });
    has_started.recv_timeout(GUARD).unwrap();
    drop(ticket);
    seen.recv_timeout(GUARD).unwrap();
    h.wait_for_late(1);
}

#[test]
fn abandoning_a_finished_job_returns_its_output() {
    let h = Harness::new(config());
    let mut ticket = h.submit(|_| 6);
    wait_until("the job to finish", || ticket.is_done());
    assert_eq!(ticket.abandon(), Some(Ok(6)));
    assert_eq!(h.late.load(Ordering::Acquire), 0);
}

#[test]
fn a_job_abandoned_before_it_starts_is_skipped() {
    // Abandon right after submitting, racing the worker: whether the job was skipped,
    // ran late or had already finished, every call is accounted for exactly once
    // (its output, or `finished_late`).
    let h = Harness::new(config());
    let ran = Arc::new(AtomicU64::new(0));
    for _ in 0..200 {
        let ran = Arc::clone(&ran);
        let mut ticket = h.submit(move |_| ran.fetch_add(1, Ordering::AcqRel));
        if ticket.abandon().is_some() {
            h.late.fetch_add(1, Ordering::AcqRel);
        }
    }
    h.wait_for_late(200);
    assert_eq!(h.late.load(Ordering::Acquire), 200);
    assert!(ran.load(Ordering::Acquire) <= 200);
}

#[test]
fn the_pool_refuses_work_beyond_its_size() {
    let h = Harness::new(ExecutorOptions {
        max_workers: 1,
        ..config()
    });
    let (release, stuck) = mpsc::channel::<()>();
    let mut busy = h.submit(move |_| {
        let _ = stuck.recv();
        1
    });
    let refused = h.executor.submit(TestJob {
        work: Some(Box::new(|_| 2)),
        late: Arc::clone(&h.late),
    });
    assert!(
        matches!(refused, Err(SubmitError::Saturated(1, _))),
        "{refused:?}"
    );
    release.send(()).unwrap();
    assert_eq!(done(busy.wait(None, None)), Ok(1));
}

#[test]
fn idle_workers_park_and_then_exit() {
    let h = Harness::new(ExecutorOptions {
        keep_alive: Duration::from_millis(50),
        ..config()
    });
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| {
                for i in 0..50 {
                    assert_eq!(done(h.submit(move |_| i).wait(None, None)), Ok(i));
                }
            });
        }
    });
    wait_until("idle workers to exit", || h.executor.workers() == 0);
    // And the pool starts again on demand.
    assert_eq!(done(h.submit(|_| 9).wait(None, None)), Ok(9));
}

#[test]
fn dropping_the_executor_lets_its_workers_exit() {
    let h = Harness::new(config());
    for i in 0..10 {
        assert_eq!(done(h.submit(move |_| i).wait(None, None)), Ok(i));
    }
    let shared = Arc::clone(&h.executor.shared);
    drop(h);
    wait_until("workers to exit", || {
        shared.workers.load(Ordering::Acquire) == 0
    });
}

#[test]
fn awaiting_never_blocks_a_current_thread_runtime() {
    // The job waits for a message that only another task on the same single-threaded
    // runtime sends: if awaiting the ticket blocked the thread, this would deadlock.
    let h = Harness::new(config());
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let output = runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<u64>();
        let ticket = h.submit(move |_| rx.recv().unwrap_or(0));
        let sender = tokio::spawn(async move {
            tokio::task::yield_now().await;
            tx.send(11).unwrap();
        });
        let output = tokio::time::timeout(GUARD, ticket).await.unwrap();
        sender.await.unwrap();
        output
    });
    assert_eq!(output, Ok(11));
}

#[test]
fn many_async_callers_on_a_multi_thread_runtime() {
    let h = Arc::new(Harness::new(config()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for caller in 0..32u64 {
            let h = Arc::clone(&h);
            tasks.push(tokio::spawn(async move {
                for call in 0..100u64 {
                    let input = caller * 1_000 + call;
                    let output = h.submit(move |_| input + 1).await;
                    assert_eq!(output, Ok(input + 1));
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
    });
    assert_eq!(h.late.load(Ordering::Acquire), 0);
}

#[test]
fn a_blocking_wait_on_a_runtime_worker_keeps_the_runtime_moving() {
    // A blocking wait inside a multi-thread runtime hands the worker's other tasks on
    // (block_in_place); the job needs one of those tasks to finish.
    let h = Arc::new(Harness::new(config()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let output = runtime.block_on(async {
        let (tx, rx) = mpsc::channel::<u64>();
        let sender = tokio::spawn(async move {
            tokio::task::yield_now().await;
            tx.send(12).unwrap();
        });
        let h2 = Arc::clone(&h);
        let waiter = tokio::spawn(async move {
            done(
                h2.submit(move |_| rx.recv().unwrap_or(0))
                    .wait(Some(Instant::now() + GUARD), None),
            )
        });
        let output = waiter.await.unwrap();
        sender.await.unwrap();
        output
    });
    assert_eq!(output, Ok(12));
}
