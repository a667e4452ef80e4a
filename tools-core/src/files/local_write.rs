//! Race-free writes on the host: the directory a write lands in is opened without
//! following any symbolic link, and the temporary file, the rename and the
//! "changed since read" check all go through that opened directory.
//!
//! Why: the file tools check a path (is it toolhost's state? a credential?) and then
//! write it. If the write re-resolved the path, a process flipping a directory symlink
//! between the check and the write could steer it into a protected directory. Here the
//! tools check the canonical path (no symlinks in it) and the write refuses to follow
//! any symlink on the way there: `openat2` with `RESOLVE_NO_SYMLINKS` on Linux 5.6+,
//! else a walk from `/` opening each component with `O_NOFOLLOW` relative to its
//! parent. A symlink that appeared since the check fails the write
//! ([`SymlinkInPath`]) instead of being followed. The final name is replaced by
//! `renameat`, which never follows a link either.

use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, CWD, FileType, FlockOperation, Mode, OFlags};
use rustix::io::Errno;

use super::WriteReport;
use super::content_hash::{ContentHash, ContentHasher, file_changed};
use crate::atomic_file::TEMP_PREFIX;

/// A symbolic link appeared in a path that was checked without one.
#[derive(Debug, thiserror::Error)]
#[error(
    "{} contains a symbolic link that was not there when the path was checked (it \
     changed during the write); nothing was written",
    path.display()
)]
pub struct SymlinkInPath {
    /// The directory being opened.
    pub path: PathBuf,
}

/// Flags of a directory handle used only as the base of `*at` calls.
#[cfg(target_os = "linux")]
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

fn invalid(path: &Path, what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{}: {what}", path.display()),
    )
}

/// An absolute, normalized path's parent directory and file name.
fn split(path: &Path) -> io::Result<(&Path, &OsStr)> {
    let name = match path.components().next_back() {
        Some(Component::Normal(name)) => name,
        _ => return Err(invalid(path, "not a file path")),
    };
    let parent = path
        .parent()
        .ok_or_else(|| invalid(path, "not a file path"))?;
    if !path.is_absolute() {
        return Err(invalid(path, "path must be absolute"));
    }
    Ok((parent, name))
}

/// Open directory `dir` (absolute, no `.`/`..`) without following symbolic links;
/// with `create`, missing components are created. Returns the handle and whether
/// anything was created.
pub fn open_dir_nofollow(dir: &Path, create: bool) -> io::Result<(OwnedFd, bool)> {
    #[cfg(target_os = "linux")]
    {
        use rustix::fs::ResolveFlags;
        let resolve = ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(CWD, dir, DIR_FLAGS, Mode::empty(), resolve) {
            Ok(fd) => return Ok((fd, false)),
            Err(Errno::LOOP) => {
                return Err(io::Error::other(SymlinkInPath {
                    path: dir.to_path_buf(),
                }));
            }
            // ENOENT: walk to create the missing part; ENOSYS/EPERM/EINVAL: no
            // openat2 here (old kernel, seccomp filter), walk instead.
            Err(Errno::NOENT | Errno::NOSYS | Errno::PERM | Errno::INVAL | Errno::AGAIN) => {}
            Err(err) => return Err(err.into()),
        }
    }
    walk_nofollow(dir, create)
}

/// The portable fallback of [`open_dir_nofollow`]: one `openat(O_NOFOLLOW)` per
/// component, each relative to the handle of its parent.
fn walk_nofollow(dir: &Path, create: bool) -> io::Result<(OwnedFd, bool)> {
    let mut fd = rustix::fs::openat(CWD, "/", DIR_FLAGS, Mode::empty())?;
    let mut created = false;
    for component in dir.components() {
        let name = match component {
            Component::RootDir => continue,
            Component::Normal(name) => name,
            _ => return Err(invalid(dir, "path must be absolute and normalized")),
        };
        let flags = DIR_FLAGS | OFlags::NOFOLLOW;
        let next = match rustix::fs::openat(&fd, name, flags, Mode::empty()) {
            Ok(next) => next,
            Err(Errno::NOENT) if create => {
                match rustix::fs::mkdirat(&fd, name, Mode::from_raw_mode(0o777)) {
                    Ok(()) => created = true,
                    Err(Errno::EXIST) => {}
                    Err(err) => return Err(err.into()),
                }
                rustix::fs::openat(&fd, name, flags, Mode::empty())?
            }
            Err(Errno::LOOP | Errno::NOTDIR) => {
                let stat = rustix::fs::statat(&fd, name, AtFlags::SYMLINK_NOFOLLOW)?;
                if FileType::from_raw_mode(stat.st_mode) == FileType::Symlink {
                    return Err(io::Error::other(SymlinkInPath {
                        path: dir.to_path_buf(),
                    }));
                }
                return Err(Errno::NOTDIR.into());
            }
            Err(err) => return Err(err.into()),
        };
        fd = next;
    }
    Ok((fd, created))
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A fresh temporary name (`.toolhost-tmp-<pid>-<n>-<nanos>`).
fn temp_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{TEMP_PREFIX}{}-{n}-{nanos:08x}", std::process::id())
}

/// Create a private temporary file in `dir`, locked (so a cleanup run by another
/// process knows it is in use); returns its name and handle.
fn create_temp(dir: &impl AsFd) -> io::Result<(String, std::fs::File)> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for _ in 0..16 {
        let name = temp_name();
        match rustix::fs::openat(dir, name.as_str(), flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => {
                rustix::fs::flock(&fd, FlockOperation::LockExclusive)?;
                return Ok((name, std::fs::File::from(fd)));
            }
            Err(Errno::EXIST) => continue,
            Err(err) => return Err(err.into()),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "could not pick a temporary file name",
    ))
}

/// The hash of `name` in `dir` as it is now (`None` when it does not exist).
fn current_hash(dir: &impl AsFd, name: &OsStr) -> io::Result<Option<ContentHash>> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let fd = match rustix::fs::openat(dir, name, flags, Mode::empty()) {
        Ok(fd) => fd,
        Err(Errno::NOENT) => return Ok(None),
        Err(err) => return Err(err.into()),
    };
    let mut file = std::fs::File::from(fd);
    let mut hasher = ContentHasher::default();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(Some(hasher.finish()))
}

/// Replace the file at `path` (absolute, normalized, symlinks not followed) with
/// `contents`: temporary file + rename inside the directory opened without following
/// links. An existing file keeps its permissions; a new one gets `new_mode`. With
/// `expected`, the write fails with [`super::FileChanged`] unless the file's content
/// still hashes to it just before the rename.
pub fn write_beneath(
    path: &Path,
    contents: &[u8],
    expected: Option<&ContentHash>,
    new_mode: u32,
) -> io::Result<WriteReport> {
    let (parent, name) = split(path)?;
    let (dir, dirs_created) = open_dir_nofollow(parent, true)?;
    let existing = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => {
            if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
                return Err(io::Error::new(
                    io::ErrorKind::IsADirectory,
                    format!("{} is a directory", path.display()),
                ));
            }
            Some(stat.st_mode & 0o7777)
        }
        Err(Errno::NOENT) => None,
        Err(err) => return Err(err.into()),
    };
    let (temp, mut file) = create_temp(&dir)?;
    let written = (|| {
        file.write_all(contents)?;
        let mode = existing.unwrap_or(new_mode);
        rustix::fs::fchmod(&file, Mode::from_raw_mode(mode))?;
        file.sync_all()?;
        if let Some(expected) = expected
            && current_hash(&dir, name)?.as_ref() != Some(expected)
        {
            return Err(file_changed(path));
        }
        rustix::fs::renameat(&dir, temp.as_str(), &dir, name)?;
        Ok(())
    })();
    if written.is_err() {
        let _ = rustix::fs::unlinkat(&dir, temp.as_str(), AtFlags::empty());
    }
    written.map(|()| WriteReport { dirs_created })
}

/// Delete the file at `path` without following symlinks on the way (a symlink as the
/// final name is removed itself, never its target).
pub fn remove_beneath(path: &Path) -> io::Result<()> {
    let (parent, name) = split(path)?;
    let (dir, _) = open_dir_nofollow(parent, false)?;
    let stat = rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    if FileType::from_raw_mode(stat.st_mode) == FileType::Directory {
        return Err(io::Error::new(
            io::ErrorKind::IsADirectory,
            format!("{} is a directory", path.display()),
        ));
    }
    rustix::fs::unlinkat(&dir, name, AtFlags::empty())?;
    Ok(())
}

/// Rename `from` to `to` (creating `to`'s missing directories), both directories
/// opened without following symlinks.
pub fn rename_beneath(from: &Path, to: &Path) -> io::Result<()> {
    let (from_parent, from_name) = split(from)?;
    let (to_parent, to_name) = split(to)?;
    let (from_dir, _) = open_dir_nofollow(from_parent, false)?;
    let (to_dir, _) = open_dir_nofollow(to_parent, true)?;
    rustix::fs::renameat(&from_dir, from_name, &to_dir, to_name)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_new_files_and_creates_directories() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        let report = write_beneath(&path, b"hi", None, 0o640).unwrap();
        assert!(report.dirs_created);
        assert_eq!(std::fs::read(&path).unwrap(), b"hi");
        let names: Vec<_> = std::fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["c.txt"]);
    }

    #[test]
    fn refuses_a_symlinked_directory_on_the_way() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        let err = write_beneath(&dir.path().join("link/x.txt"), b"x", None, 0o600).unwrap_err();
        assert!(
            err.get_ref().is_some_and(|e| e.is::<SymlinkInPath>()),
            "{err}"
        );
        assert!(!dir.path().join("real/x.txt").exists());
        // The walk (no openat2) refuses it too.
        let err = walk_nofollow(&dir.path().join("link"), false).unwrap_err();
        assert!(err.get_ref().is_some_and(|e| e.is::<SymlinkInPath>()));
    }

    #[test]
    fn a_symlink_as_final_name_is_replaced_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim.txt");
        std::fs::write(&victim, "keep").unwrap();
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        write_beneath(&link, b"new", None, 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&link).unwrap(), "new");
    }

    #[test]
    fn expected_hash_mismatch_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "one").unwrap();
        let stale = ContentHash::of(b"zero");
        let err = write_beneath(&path, b"two", Some(&stale), 0o600).unwrap_err();
        assert!(super::super::is_file_changed(&err), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "one");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        let fresh = ContentHash::of(b"one");
        write_beneath(&path, b"two", Some(&fresh), 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
    }

    #[test]
    fn remove_and_rename_do_not_follow_directory_links() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("real")).unwrap();
        std::fs::write(dir.path().join("real/f"), "x").unwrap();
        std::os::unix::fs::symlink(dir.path().join("real"), dir.path().join("link")).unwrap();
        assert!(remove_beneath(&dir.path().join("link/f")).is_err());
        assert!(rename_beneath(&dir.path().join("link/f"), &dir.path().join("g")).is_err());
        assert!(dir.path().join("real/f").exists());
        rename_beneath(&dir.path().join("real/f"), &dir.path().join("new/g")).unwrap();
        remove_beneath(&dir.path().join("new/g")).unwrap();
        assert!(!dir.path().join("new/g").exists());
    }
}
