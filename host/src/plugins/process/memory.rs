//! The memory limit of a plugin process and everything it starts
//! (`plugins.memory_limit_mb`), and how to tell that a process died on it.
//!
//! What is limited is memory really used, not address space: a JIT runtime a plugin
//! starts (Node/V8, the JVM, LuaJIT, ...) reserves large virtual ranges it never
//! touches — V8 alone reserves about 10 GiB for each WebAssembly memory, so under an
//! `RLIMIT_AS` of 4 GiB a plugin's Node helper dies with "Cannot allocate Wasm memory".
//! So, where the host can create one, each plugin process gets its own cgroup v2 below
//! the host's cgroup, with `memory.max` set to the limit (and `memory.swap.max` 0); the
//! child moves itself into it between `fork` and `exec`, so the plugin and all its
//! children are counted together, and an OOM kill is read back from `memory.events`.
//! Where no cgroup can be created (cgroup v1, no delegation, a cgroup with processes
//! and no memory controller for its children), the fallback is an address-space limit
//! sized for JIT runtimes: the configured limit plus [`JIT_RESERVE`], said once per
//! host process. See docs/python-plugins.md ("Memory limit").

use std::fs::File;
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::sync::atomic::{AtomicU64, Ordering};

/// The address space added to the limit when it can only be an `RLIMIT_AS`: room for
/// the virtual reservations of JIT runtimes (V8's WebAssembly cages, code ranges and
/// heap reservations) that are never backed by memory.
pub const JIT_RESERVE: u64 = 64 << 30;

/// How the memory of one plugin process is limited.
#[derive(Debug)]
pub enum Cap {
    /// No limit (`memory_limit_mb = 0`).
    None,
    /// A cgroup of its own with `memory.max`.
    Cgroup(Cgroup),
    /// An address-space limit of this many bytes (the fallback).
    AddressSpace(u64),
}

/// A cgroup v2 made for one plugin process (removed when dropped).
#[derive(Debug)]
pub struct Cgroup {
    dir: PathBuf,
    /// `cgroup.procs`, opened before the fork: the child writes "0" to it to move itself.
    procs: OwnedFd,
    limit: u64,
}

/// Cgroups made by this process, for unique names.
static MADE: AtomicU64 = AtomicU64::new(0);

/// The fallback is said once per host process.
static FALLBACK_SAID: Once = Once::new();

impl Cap {
    /// The limit for a plugin process named `name`, of `bytes` (0 = none).
    pub fn prepare(name: &str, bytes: u64) -> Cap {
        if bytes == 0 {
            return Cap::None;
        }
        match Cgroup::create(name, bytes) {
            Ok(cgroup) => Cap::Cgroup(cgroup),
            Err(why) => {
                let cap = bytes.saturating_add(JIT_RESERVE);
                FALLBACK_SAID.call_once(|| {
                    tracing::info!(
                        "plugin processes: no cgroup v2 memory limit ({why}); limiting their \
                         address space to {} MiB instead (plugins.memory_limit_mb + {} GiB \
                         for JIT runtimes' reservations)",
                        cap >> 20,
                        JIT_RESERVE >> 30
                    );
                });
                Cap::AddressSpace(cap)
            }
        }
    }

    /// The `RLIMIT_AS` to set in the child (0 = none).
    pub fn address_space(&self) -> u64 {
        match self {
            Cap::AddressSpace(bytes) => *bytes,
            Cap::None | Cap::Cgroup(_) => 0,
        }
    }

    /// The descriptor the child writes "0" to before `exec` (cgroup only).
    pub fn procs_fd(&self) -> Option<i32> {
        match self {
            Cap::Cgroup(cgroup) => Some(cgroup.procs.as_raw_fd()),
            Cap::None | Cap::AddressSpace(_) => None,
        }
    }

    /// OOM kills in the plugin's cgroup so far (0 without one).
    pub fn oom_kills(&self) -> u64 {
        match self {
            Cap::Cgroup(cgroup) => cgroup.oom_kills(),
            Cap::None | Cap::AddressSpace(_) => 0,
        }
    }

    /// What to add to "its process {how}" when a plugin process died: that the memory
    /// limit killed it, or (address-space fallback) that an allocation past the limit
    /// may have, when it died the way failed allocations end.
    pub fn death_note(&self, oom_kills_before: u64, signal: Option<i32>) -> Option<String> {
        match self {
            Cap::Cgroup(cgroup) => (cgroup.oom_kills() > oom_kills_before).then(|| {
                format!(
                    "killed by the memory limit of {} MiB (plugins.memory_limit_mb)",
                    cgroup.limit >> 20
                )
            }),
            Cap::AddressSpace(bytes) => signal
                .filter(|s| [libc::SIGABRT, libc::SIGSEGV, libc::SIGBUS, libc::SIGTRAP].contains(s))
                .map(|_| {
                    format!(
                        "if it ran out of memory: its address space is limited to {} MiB \
                         (plugins.memory_limit_mb + JIT reserve)",
                        bytes >> 20
                    )
                }),
            Cap::None => None,
        }
    }
}

/// Why no cgroup could be made (said once, in the fallback's message).
#[derive(Debug, thiserror::Error)]
pub enum CgroupError {
    /// The host is not in a cgroup v2 hierarchy.
    #[error("the host is in no cgroup v2")]
    NotV2,
    /// The memory controller is not available to the host's cgroup's children.
    #[error("the memory controller is not delegated to {0}")]
    NoMemoryController(PathBuf),
    /// Creating or configuring the cgroup failed.
    #[error("cannot set up {path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError + '_ {
    move |source| CgroupError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The directory of this process's cgroup v2, from `/proc/self/cgroup` and the
/// cgroup2 mount in `/proc/self/mountinfo`.
fn own_cgroup_dir() -> Option<PathBuf> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let relative = cgroups.lines().find_map(|l| l.strip_prefix("0::"))?;
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mounts.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        after
            .starts_with("cgroup2 ")
            .then(|| before.split(' ').nth(4))
            .flatten()
    })?;
    Some(Path::new(mount).join(relative.trim_start_matches('/')))
}

impl Cgroup {
    /// A new cgroup below the host's with `memory.max` = `bytes`.
    fn create(name: &str, bytes: u64) -> Result<Cgroup, CgroupError> {
        let parent = own_cgroup_dir().ok_or(CgroupError::NotV2)?;
        let subtree = parent.join("cgroup.subtree_control");
        let enabled = std::fs::read_to_string(&subtree).unwrap_or_default();
        if !enabled.split_whitespace().any(|c| c == "memory") {
            // Only possible where the host's cgroup has no processes of its own.
            let _ = std::fs::write(&subtree, "+memory");
            let enabled = std::fs::read_to_string(&subtree).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "memory") {
                return Err(CgroupError::NoMemoryController(parent));
            }
        }
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let slug: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
            .collect();
        let dir = parent.join(format!("toolhost-plugin-{slug}-{}-{n}", std::process::id()));
        std::fs::create_dir(&dir).map_err(io_error(&dir))?;
        let setup = || -> Result<OwnedFd, CgroupError> {
            let max = dir.join("memory.max");
            std::fs::write(&max, bytes.to_string()).map_err(io_error(&max))?;
            // Swap would let a plugin exceed the limit unseen; best effort.
            let _ = std::fs::write(dir.join("memory.swap.max"), "0");
            let procs = dir.join("cgroup.procs");
            let file = File::options()
                .write(true)
                .open(&procs)
                .map_err(io_error(&procs))?;
            Ok(OwnedFd::from(file))
        };
        match setup() {
            Ok(procs) => Ok(Cgroup {
                dir,
                procs,
                limit: bytes,
            }),
            Err(e) => {
                let _ = std::fs::remove_dir(&dir);
                Err(e)
            }
        }
    }

    fn oom_kills(&self) -> u64 {
        std::fs::read_to_string(self.dir.join("memory.events"))
            .ok()
            .and_then(|events| {
                events
                    .lines()
                    .find_map(|l| l.strip_prefix("oom_kill "))
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Whatever the plugin left running goes with it; then the empty cgroup goes.
        if let Ok(mut kill) = File::options()
            .write(true)
            .open(self.dir.join("cgroup.kill"))
        {
            let _ = kill.write_all(b"1");
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        tracing::debug!(dir = %self.dir.display(), "plugin cgroup not removed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_limit_means_none() {
        assert!(matches!(Cap::prepare("x", 0), Cap::None));
        assert_eq!(Cap::prepare("x", 0).address_space(), 0);
    }

    #[test]
    fn a_limit_is_a_cgroup_or_an_address_space_with_jit_room() {
        match Cap::prepare("x", 1 << 30) {
            Cap::Cgroup(cgroup) => {
                let max = std::fs::read_to_string(cgroup.dir.join("memory.max")).unwrap();
                assert_eq!(max.trim(), (1u64 << 30).to_string());
            }
            Cap::AddressSpace(bytes) => assert_eq!(bytes, (1 << 30) + JIT_RESERVE),
            Cap::None => panic!("a limit was asked for"),
        }
    }

    #[test]
    fn deaths_by_allocation_failure_are_explained_under_the_fallback() {
        let cap = Cap::AddressSpace(2 << 30);
        assert!(
            cap.death_note(0, Some(libc::SIGABRT))
                .is_some_and(|n| n.contains("2048 MiB")),
        );
        assert_eq!(cap.death_note(0, Some(libc::SIGTERM)), None);
        assert_eq!(cap.death_note(0, None), None);
        assert_eq!(Cap::None.death_note(0, Some(libc::SIGABRT)), None);
    }
}
