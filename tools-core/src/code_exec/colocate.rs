//! A request and its answer on one CPU: an `execute_code` script's tool calls, and the
//! host's calls to an out-of-process plugin (`host/src/plugins/process/`, which uses
//! [`Colocation::on`] and [`Colocation::hold`]).
//!
//! Why: each call is two wake-ups — the host thread that serves the socket wakes when
//! the request arrives, the script wakes when the answer does. Linux places a woken
//! thread on an idle CPU rather than beside the thread that woke it, so on a machine
//! with idle cores every wake-up crosses CPUs, and waking an idle (virtual) CPU costs
//! tens of microseconds: measured on a 2-vCPU VM, a no-op round trip took 62 µs across
//! CPUs and 3.9 µs on one, and a `read_file` as the script times it 91 µs against 26 µs
//! (BENCHMARKS.md, execute_code).
//!
//! So both sides hold one CPU while a call is in flight, and only then: the serving
//! thread is pinned while it waits for and answers a request but runs the tool itself
//! with its full CPU mask (processes and threads a tool starts inherit the mask of the
//! thread that starts them: a `terminal` command must not be confined to one CPU), and
//! the script's stub pins itself from sending the request to reading the answer
//! (`TOOLHOST_RPC_CPU`, `stubs.rs`), so what the script itself starts between calls
//! runs anywhere. Where the CPU cannot be chosen (not Linux, one allowed CPU, a
//! failing call), nothing is pinned and calls work as before.

/// The CPU one run's calls are served on, and the serving thread's own mask.
#[derive(Clone, Debug)]
pub struct Colocation {
    cpu: usize,
    #[cfg(target_os = "linux")]
    all: rustix::thread::CpuSet,
}

impl Colocation {
    /// The CPU the calling thread runs on, when it may run on others too.
    #[cfg(target_os = "linux")]
    pub fn choose() -> Option<Self> {
        let all = rustix::thread::sched_getaffinity(None).ok()?;
        let cpu = rustix::thread::sched_getcpu();
        (all.count() > 1 && all.is_set(cpu)).then_some(Colocation { cpu, all })
    }

    /// Not supported here: never.
    #[cfg(not(target_os = "linux"))]
    pub fn choose() -> Option<Self> {
        None
    }

    /// `cpu` (chosen by another process), when the calling thread may run on it and on
    /// others too.
    #[cfg(target_os = "linux")]
    pub fn on(cpu: usize) -> Option<Self> {
        let all = rustix::thread::sched_getaffinity(None).ok()?;
        let usable = cpu < rustix::thread::CpuSet::MAX_CPU && all.count() > 1 && all.is_set(cpu);
        usable.then_some(Colocation { cpu, all })
    }

    /// Not supported here: never.
    #[cfg(not(target_os = "linux"))]
    pub fn on(_cpu: usize) -> Option<Self> {
        None
    }

    /// Hold the calling thread (any thread, with its own mask) on the CPU until the
    /// guard is dropped, which gives the thread its mask back.
    #[cfg(target_os = "linux")]
    pub fn hold(&self) -> Held {
        let own = rustix::thread::sched_getaffinity(None)
            .ok()
            .filter(|own| own.count() > 1 && own.is_set(self.cpu));
        if own.is_some() {
            self.pin();
        }
        Held { own }
    }

    /// Not supported here: a guard that does nothing.
    #[cfg(not(target_os = "linux"))]
    pub fn hold(&self) -> Held {
        Held {}
    }

    /// The CPU (given to the script as `TOOLHOST_RPC_CPU`).
    pub fn cpu(&self) -> usize {
        self.cpu
    }

    /// Hold this thread on the CPU (ignored when the kernel refuses).
    #[cfg(target_os = "linux")]
    pub fn pin(&self) {
        let mut one = rustix::thread::CpuSet::new();
        one.set(self.cpu);
        let _ = rustix::thread::sched_setaffinity(None, &one);
    }

    /// Give this thread its full mask back.
    #[cfg(target_os = "linux")]
    pub fn unpin(&self) {
        let _ = rustix::thread::sched_setaffinity(None, &self.all);
    }

    /// Not supported here: nothing to do.
    #[cfg(not(target_os = "linux"))]
    pub fn pin(&self) {}

    /// Not supported here: nothing to do.
    #[cfg(not(target_os = "linux"))]
    pub fn unpin(&self) {}
}

/// A thread held on one CPU by [`Colocation::hold`]; dropping it restores the mask.
#[derive(Debug)]
pub struct Held {
    #[cfg(target_os = "linux")]
    own: Option<rustix::thread::CpuSet>,
}

impl Drop for Held {
    fn drop(&mut self) {
        #[cfg(target_os = "linux")]
        if let Some(own) = &self.own {
            let _ = rustix::thread::sched_setaffinity(None, own);
        }
    }
}

#[cfg(test)]
#[cfg(target_os = "linux")]
mod tests {
    use super::*;

    fn allowed() -> u32 {
        rustix::thread::sched_getaffinity(None).unwrap().count()
    }

    /// The calling thread's colocation; none only where it may use a single CPU
    /// (`allowed` CPUs), which the caller then has nothing to test on.
    fn chosen(allowed: u32) -> Option<Colocation> {
        let colocation = Colocation::choose();
        if colocation.is_none() {
            assert_eq!(
                allowed, 1,
                "only a single allowed CPU leaves nothing to choose"
            );
        }
        colocation
    }

    #[test]
    fn pinning_holds_one_cpu_and_unpinning_restores_the_mask() {
        // On a thread of its own: the test harness's thread is not ours to move.
        std::thread::spawn(|| {
            let before = allowed();
            let Some(colocation) = chosen(before) else {
                return;
            };
            colocation.pin();
            assert_eq!(allowed(), 1);
            assert_eq!(rustix::thread::sched_getcpu(), colocation.cpu());
            colocation.unpin();
            assert_eq!(allowed(), before);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_held_thread_gets_its_own_mask_back() {
        std::thread::spawn(|| {
            let before = allowed();
            let Some(colocation) = chosen(before) else {
                return;
            };
            let other = std::thread::spawn(move || {
                let mine = allowed();
                let held = colocation.hold();
                assert_eq!(allowed(), 1);
                drop(held);
                assert_eq!(allowed(), mine);
            });
            other.join().unwrap();
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_cpu_outside_the_mask_is_not_used() {
        assert!(Colocation::on(rustix::thread::CpuSet::MAX_CPU).is_none());
        assert!(Colocation::on(usize::MAX).is_none());
    }
}
