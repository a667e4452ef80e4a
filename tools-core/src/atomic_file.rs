//! Atomic file writes: write a temporary file in the target's directory, flush it to
//! disk, then rename it over the target. Readers see the old or the new content, never
//! half of it; a crash leaves the old file intact.
//!
//! A process killed mid-write leaves its temporary file (`.toolhost-tmp-*`) behind.
//! Writers hold an advisory lock on the temporary file while it exists, so
//! [`remove_stale_temp_files`] (run when toolhost starts) can tell a leftover from a
//! write in progress in another process.

use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime};

/// Name prefix of every temporary file toolhost writes.
pub const TEMP_PREFIX: &str = ".toolhost-tmp-";

/// A temporary file younger than this is never removed (its writer may not have
/// locked it yet).
const STALE_AFTER: Duration = Duration::from_secs(10);

/// How deep [`remove_stale_temp_files`] descends.
const CLEANUP_MAX_DEPTH: usize = 4;

/// Write `contents` to `path` atomically, creating parent directories. An existing
/// file's permissions are kept.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    std::fs::create_dir_all(dir)?;
    let mut tmp = tempfile::Builder::new()
        .prefix(TEMP_PREFIX)
        .tempfile_in(dir)?;
    #[cfg(unix)]
    rustix::fs::flock(tmp.as_file(), rustix::fs::FlockOperation::LockExclusive)?;
    tmp.write_all(contents)?;
    tmp.as_file().sync_all()?;
    if let Ok(meta) = std::fs::metadata(path) {
        tmp.as_file().set_permissions(meta.permissions())?;
    }
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// Remove temporary files left behind by killed writers under `root` (at most a few
/// levels deep, symlinks not followed): files named `.toolhost-tmp-*`, older than a
/// few seconds and not locked by a live writer. Returns how many were removed;
/// problems are logged, never fatal.
pub fn remove_stale_temp_files(root: &Path) -> usize {
    remove_stale_in(root, CLEANUP_MAX_DEPTH)
}

fn remove_stale_in(dir: &Path, depth: usize) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let Ok(file_type) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if file_type.is_dir() {
            if depth > 0 {
                removed += remove_stale_in(&path, depth - 1);
            }
            continue;
        }
        let is_temp = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(TEMP_PREFIX));
        if file_type.is_file() && is_temp && is_stale(&path) {
            match std::fs::remove_file(&path) {
                Ok(()) => {
                    tracing::debug!(path = %path.display(), "removed a leftover temporary file");
                    removed += 1;
                }
                Err(err) => {
                    tracing::debug!(path = %path.display(), %err, "cannot remove a leftover temporary file");
                }
            }
        }
    }
    removed
}

/// Old enough and not locked by a writer.
fn is_stale(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let old = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| SystemTime::now().duration_since(m).ok())
        .is_some_and(|age| age >= STALE_AFTER);
    if !old {
        return false;
    }
    #[cfg(unix)]
    {
        rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive).is_ok()
    }
    #[cfg(not(unix))]
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_and_replaces() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/file.txt");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        // No temporary files are left behind.
        let leftovers = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(leftovers, 1);
    }

    #[cfg(unix)]
    #[test]
    fn keeps_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("script.sh");
        std::fs::write(&path, "old").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        write_atomic(&path, b"new").unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o755);
    }

    fn age(path: &Path) {
        let old = SystemTime::now() - Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(old)
            .unwrap();
    }

    #[test]
    fn stale_temporary_files_are_removed_and_others_kept() {
        let dir = tempfile::tempdir().unwrap();
        let nested = dir.path().join("state/todos");
        std::fs::create_dir_all(&nested).unwrap();
        let stale = nested.join(".toolhost-tmp-dead");
        let fresh = nested.join(".toolhost-tmp-young");
        let other = nested.join("list.json");
        for p in [&stale, &fresh, &other] {
            std::fs::write(p, "x").unwrap();
        }
        age(&stale);
        age(&other);
        assert_eq!(remove_stale_temp_files(dir.path()), 1);
        assert!(!stale.exists());
        assert!(fresh.exists());
        assert!(other.exists());
    }

    #[cfg(unix)]
    #[test]
    fn a_locked_temporary_file_is_in_use_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let busy = dir.path().join(".toolhost-tmp-busy");
        std::fs::write(&busy, "x").unwrap();
        age(&busy);
        let writer = std::fs::File::open(&busy).unwrap();
        rustix::fs::flock(&writer, rustix::fs::FlockOperation::LockExclusive).unwrap();
        assert_eq!(remove_stale_temp_files(dir.path()), 0);
        drop(writer);
        assert_eq!(remove_stale_temp_files(dir.path()), 1);
    }
}
