//! An advisory lock held on a `*.lock` file while a read-modify-write of toolhost's
//! state runs, so separate processes sharing a home (several `toolhost call`s, an MCP
//! server and a CLI call) never lose each other's updates: each one re-reads the state
//! under the lock and writes before releasing it.
//!
//! Unix uses `flock` (released by the kernel when the process dies, so a killed
//! process never leaves the state locked). Elsewhere only the caller's in-process mutex
//! applies.

use std::path::Path;

/// An exclusive lock, released when dropped.
#[derive(Debug)]
pub struct FileLock {
    _file: std::fs::File,
}

impl FileLock {
    /// Block until the exclusive lock on `lock_path` is held (the file and its parent
    /// directories are created when missing).
    pub fn acquire(lock_path: &Path) -> std::io::Result<Self> {
        if let Some(parent) = lock_path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(lock_path)?;
        #[cfg(unix)]
        rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
        Ok(FileLock { _file: file })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_second_holder_waits_for_the_first() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = FileLock::acquire(&path).unwrap();
        let other = std::fs::File::open(&path).unwrap();
        let try_lock =
            || rustix::fs::flock(&other, rustix::fs::FlockOperation::NonBlockingLockExclusive);
        assert!(try_lock().is_err());
        drop(first);
        assert!(try_lock().is_ok());
    }
}
