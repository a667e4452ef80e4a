//! Which CPU the current thread runs on, to tell whether the two sides of a hand-off
//! share a core (then spinning only delays the other side: yield instead).

/// Returned when the platform cannot tell.
pub const UNKNOWN: u32 = u32::MAX;

/// The CPU this thread is running on right now, or [`UNKNOWN`].
///
/// On Linux with glibc ≥ 2.35 this reads the kernel's rseq area (about a nanosecond),
/// otherwise the vDSO.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn current() -> u32 {
    // SAFETY: sched_getcpu takes no arguments and touches no memory of ours.
    let cpu = unsafe { libc::sched_getcpu() };
    u32::try_from(cpu).unwrap_or(UNKNOWN)
}

/// The CPU this thread is running on right now, or [`UNKNOWN`].
#[cfg(not(target_os = "linux"))]
pub fn current() -> u32 {
    UNKNOWN
}

/// True when `peer` (a CPU number published by the other side) is this thread's CPU.
pub fn shared_with(peer: u32) -> bool {
    peer != UNKNOWN && current() == peer
}

/// Move this thread off its current CPU (it may come back later): restrict it to the
/// other CPUs it is allowed on, then restore its mask. False when it has nowhere to go.
#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
pub fn step_aside() -> bool {
    let here = current();
    let size = std::mem::size_of::<libc::cpu_set_t>();
    // SAFETY: cpu_set_t is plain data; the calls get its exact size.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut allowed) != 0 || libc::CPU_COUNT(&allowed) < 2 {
            return false;
        }
        let mut elsewhere = allowed;
        if (here as usize) < libc::CPU_SETSIZE as usize {
            libc::CPU_CLR(here as usize, &mut elsewhere);
        }
        if libc::sched_setaffinity(0, size, &elsewhere) != 0 {
            return false;
        }
        libc::sched_setaffinity(0, size, &allowed) == 0
    }
}

/// Move this thread off its current CPU: not supported here.
#[cfg(not(target_os = "linux"))]
pub fn step_aside() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_peer_never_shares() {
        assert!(!shared_with(UNKNOWN));
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn linux_knows_the_cpu() {
        let cpu = current();
        assert_ne!(cpu, UNKNOWN);
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        // CPU numbers may be sparse, but never beyond the kernel's limit.
        assert!((cpu as usize) < cores.max(1024));
    }

    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn allowed() -> Vec<usize> {
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: as in step_aside.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(libc::sched_getaffinity(0, size, &mut set), 0);
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&cpu| libc::CPU_ISSET(cpu, &set))
                .collect()
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn stepping_aside_leaves_the_affinity_as_it_was() {
        // On a thread of its own: the test harness's thread is not ours to move.
        std::thread::spawn(|| {
            let before = allowed();
            let moved = step_aside();
            assert_eq!(moved, before.len() > 1);
            assert_eq!(allowed(), before);
        })
        .join()
        .unwrap();
    }
}
