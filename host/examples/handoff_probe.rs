#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};
use toolhost::plugins::executor::{Executor, ExecutorConfig, Job, Waited};

struct Noop;
impl Job for Noop {
    type Output = u64;
    fn run(&mut self, _: &AtomicBool) -> u64 {
        1
    }
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .map(|s| s.parse().unwrap())
        .unwrap_or(200_000);
    let mut cfg = ExecutorConfig::plugin_calls();
    if std::env::var_os("NOSPIN").is_some() {
        cfg.worker_spin = Duration::ZERO;
        cfg.caller_spin = Duration::ZERO;
    }
    let ex = Executor::new(cfg);
    let mut lat = Vec::with_capacity(n);
    let t0 = Instant::now();
    let gap: u64 = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(0);
    for _ in 0..n {
        let g = Instant::now();
        while (g.elapsed().as_nanos() as u64) < gap {
            std::hint::spin_loop();
        }
        let s = Instant::now();
        let mut t = ex.submit(Noop).unwrap();
        match t.wait(Some(Instant::now() + Duration::from_secs(5)), None) {
            Waited::Done(Ok(_)) => {}
            _ => panic!(),
        }
        lat.push(s.elapsed().as_nanos() as u64);
    }
    let total = t0.elapsed();
    let _ = gap;
    lat.sort();
    let p = |q: f64| lat[((n as f64) * q) as usize];
    println!(
        "mean {:.0} ns  p50 {} p90 {} p99 {} p99.9 {} max {}  workers {}",
        total.as_nanos() as f64 / n as f64,
        p(0.5),
        p(0.9),
        p(0.99),
        p(0.999),
        lat[n - 1],
        ex.workers()
    );
}
