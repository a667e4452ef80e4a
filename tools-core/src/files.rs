//! The file system the file tools (`read_file`, `write_file`, `patch`, `search_files`)
//! work on, behind a small trait so that an execution environment can route them
//! elsewhere: with the docker backend, reading a file reads it inside the container.
//!
//! Two traits:
//! - [`FileSystem`]: one task's view of a file system — its working directory, its home,
//!   and a handful of primitive operations on absolute paths (metadata, read, atomic
//!   write, remove, rename, list a directory, walk a tree).
//! - [`FileSystemProvider`]: hands out the `FileSystem` of a task. [`CoreServices`]
//!   holds one; the file tools call `for_task(ctx.task_key())` on every call, so a
//!   provider can follow a task's live working directory (a `cd` in the terminal) and
//!   its backend.
//!
//! The tools do everything else themselves (pagination, binary detection, fuzzy
//! matching, regex search, result shapes) on top of these primitives, so a backend
//! only implements plain file operations and every backend behaves the same.
//! [`LocalFileSystem`] / [`LocalFileSystemProvider`] are the default, on the host;
//! [`InMemoryFileSystem`] is a compact reference implementation (tests, embedders).
//!
//! # Implementing a backend (docker, ssh, ...)
//! - Paths handed to the methods are absolute and lexically normalized (no `.`/`..`)
//!   in the backend's own namespace; [`FileSystem::resolve`] builds them from the
//!   model's input (relative to [`FileSystem::cwd`], `~` expanded with
//!   [`FileSystem::home_dir`]).
//! - Report failures as `std::io::Error` with the right [`std::io::ErrorKind`]
//!   (`NotFound`, `PermissionDenied`, `IsADirectory`, ...): the tools turn `NotFound`
//!   into "File not found" results with suggestions, everything else into an error
//!   result carrying the message.
//! - `write_atomic` must never leave a half-written target: write a temporary file in
//!   the same directory, then rename it over the target (`mktemp` + `cat >` + `mv -f`
//!   over a shell works).
//! - `walk` visits regular files only, skips hidden entries and honours `.gitignore` /
//!   `.ignore` files like ripgrep does (`rg --files` or `find` with a hidden-entry
//!   filter are fine), and stops as soon as the visitor returns [`WalkControl::Stop`].
//! - Every method may block (they are called from blocking threads, never from async
//!   tasks).
//!
//! [`CoreServices`]: crate::services::CoreServices

mod content_hash;
mod in_memory;
mod local;
#[cfg(unix)]
mod local_write;

use std::collections::HashMap;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, PoisonError, RwLock};
use std::time::SystemTime;

pub use content_hash::{ContentHash, ContentHasher, FileChanged, file_changed, is_file_changed};
pub use in_memory::InMemoryFileSystem;
pub use local::{LocalFileSystem, canonical_local};
#[cfg(unix)]
pub use local_write::SymlinkInPath;

/// What a path is (symlinks followed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// Anything else: device, FIFO, socket. Reading one can block forever.
    Other,
}

/// Metadata of a path, symlinks followed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMeta {
    /// File, directory or other.
    pub kind: FileKind,
    /// Size in bytes.
    pub len: u64,
    /// Last modification time, when the backend knows it.
    pub modified: Option<SystemTime>,
}

/// One entry of a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirEntry {
    /// The entry's file name (not a path).
    pub name: String,
    /// What it is (symlinks followed; a dangling link is [`FileKind::Other`]).
    pub kind: FileKind,
}

/// How [`FileSystem::walk`] filters the tree.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalkOptions {
    /// Visit hidden files and descend into hidden directories (names starting with
    /// `.`). The root itself is always walked, hidden or not.
    pub hidden: bool,
    /// Honour `.gitignore` (inside git repositories), `.ignore` and git's exclude files.
    pub respect_ignore_files: bool,
    /// Descend at most this deep below the root (`None` = unlimited).
    pub max_depth: Option<usize>,
}

impl Default for WalkOptions {
    /// ripgrep's defaults: hidden entries skipped, ignore files honoured, any depth.
    fn default() -> Self {
        WalkOptions {
            hidden: false,
            respect_ignore_files: true,
            max_depth: None,
        }
    }
}

/// A regular file found by [`FileSystem::walk`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkEntry {
    /// Absolute path of the file.
    pub path: PathBuf,
    /// Size in bytes.
    pub len: u64,
    /// Last modification time, when known.
    pub modified: Option<SystemTime>,
}

/// Whether a walk goes on after a visited entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WalkControl {
    /// Keep walking.
    Continue,
    /// Stop the walk now (limit reached, call cancelled).
    Stop,
}

/// A file opened for reading, with the path it really is.
pub struct OpenedFile {
    /// Reads the file from its start.
    pub reader: Box<dyn io::Read + Send>,
    /// The path of what was opened, symlinks resolved — taken from the handle where the
    /// backend can (Linux), so a link flipped after a check is seen.
    pub real_path: PathBuf,
}

/// What an atomic write did besides writing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteReport {
    /// True when missing parent directories were created.
    pub dirs_created: bool,
}

/// One task's view of a file system. See the module docs for the contract.
pub trait FileSystem: Send + Sync {
    /// Short backend name for messages and logs: `local`, `docker`, `ssh`, ...
    fn kind(&self) -> &str;

    /// The task's working directory (absolute); relative paths resolve against it.
    fn cwd(&self) -> PathBuf;

    /// The directory `~` expands to, when known.
    fn home_dir(&self) -> Option<PathBuf>;

    /// Metadata of `path`, following symlinks.
    fn metadata(&self, path: &Path) -> io::Result<FileMeta>;

    /// A reader over the file at `path`, from its start. The file tools stream large
    /// files through it (`read_file` pages a multi-gigabyte log without loading it).
    /// Only regular files: the local backend refuses devices, FIFOs and sockets
    /// without blocking on them (opened non-blocking, checked on the handle).
    fn open(&self, path: &Path) -> io::Result<Box<dyn io::Read + Send>>;

    /// [`open`](Self::open), plus the real path of the opened file for guards that must
    /// judge what is actually read. The default takes
    /// [`canonicalize`](Self::canonicalize) after opening.
    fn open_verified(&self, path: &Path) -> io::Result<OpenedFile> {
        let reader = self.open(path)?;
        Ok(OpenedFile {
            reader,
            real_path: self.canonicalize(path),
        })
    }

    /// The whole content of the file at `path`. The default reads [`open`](Self::open)
    /// to the end.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::new();
        self.open(path)?.read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// At most `max` bytes from the start of the file (used to sniff binary content).
    /// The default reads that much through [`open`](Self::open).
    fn read_prefix(&self, path: &Path, max: usize) -> io::Result<Vec<u8>> {
        let mut bytes = Vec::with_capacity(max.min(64 * 1024));
        self.open(path)?.take(max as u64).read_to_end(&mut bytes)?;
        Ok(bytes)
    }

    /// Replace the file at `path` with `contents` atomically (temporary file in the
    /// same directory + rename), creating missing parent directories and keeping an
    /// existing file's permissions. The local backend follows no symlink on the way
    /// (a link as the final name is replaced): callers that mean to write through links
    /// pass [`canonicalize`](Self::canonicalize)`(path)`, which is also the path their
    /// guards must check.
    fn write_atomic(&self, path: &Path, contents: &[u8]) -> io::Result<WriteReport>;

    /// [`write_atomic`](Self::write_atomic), but only if the file's content still
    /// hashes to `expected` (it is what the caller read); otherwise nothing is written
    /// and the error is a [`FileChanged`] ([`is_file_changed`]). A missing file counts
    /// as changed. The default re-reads the file just before writing; the local backend
    /// checks inside the directory it writes in, right before the rename.
    fn write_atomic_if_unchanged(
        &self,
        path: &Path,
        contents: &[u8],
        expected: &ContentHash,
    ) -> io::Result<WriteReport> {
        let current = match self.read(path) {
            Ok(bytes) => Some(ContentHash::of(&bytes)),
            Err(err) if err.kind() == io::ErrorKind::NotFound => None,
            Err(err) => return Err(err),
        };
        if current.as_ref() != Some(expected) {
            return Err(file_changed(path));
        }
        self.write_atomic(path, contents)
    }

    /// Delete the file at `path` (never a directory).
    fn remove_file(&self, path: &Path) -> io::Result<()>;

    /// Rename `from` to `to`, creating `to`'s missing parent directories.
    fn rename(&self, from: &Path, to: &Path) -> io::Result<()>;

    /// The entries of the directory at `path`, sorted by name.
    fn list_dir(&self, path: &Path) -> io::Result<Vec<DirEntry>>;

    /// Visit the regular files under `root` (or `root` itself when it is a file) in a
    /// deterministic order, filtered by `options`, until `visit` returns
    /// [`WalkControl::Stop`]. Unreadable subdirectories are skipped, not errors; an
    /// error means `root` itself could not be walked.
    fn walk(
        &self,
        root: &Path,
        options: &WalkOptions,
        visit: &mut dyn FnMut(WalkEntry) -> WalkControl,
    ) -> io::Result<()>;

    /// Turn a path as the model wrote it into an absolute, normalized path: `~` and
    /// `~/…` expand to [`home_dir`](FileSystem::home_dir), relative paths join
    /// [`cwd`](FileSystem::cwd), then `.` and `..` are folded lexically (symlinks are
    /// not followed: the path means the same thing in every backend).
    fn resolve(&self, path: &str) -> PathBuf {
        resolve_path(path, &self.cwd(), self.home_dir().as_deref())
    }

    /// `path` with symbolic links resolved, for guards that must judge the file really
    /// touched (a link to `~/.ssh/…` is `~/.ssh/…`). A path that does not exist yet
    /// resolves its nearest existing ancestor. The default returns `path` unchanged
    /// (backends that cannot resolve links are judged by the path as written).
    fn canonicalize(&self, path: &Path) -> PathBuf {
        path.to_path_buf()
    }

    /// How many names (hard links) the regular file at `path` has, symlinks followed;
    /// `None` when it is not a regular file or the backend cannot tell. The secret-file
    /// guard treats a file with other names as possibly secret
    /// ([`crate::tools`]' `secret_files`).
    fn link_count(&self, path: &Path) -> Option<u64> {
        let _ = path;
        None
    }

    /// True when `path` exists (following symlinks).
    fn exists(&self, path: &Path) -> bool {
        self.metadata(path).is_ok()
    }
}

/// Hands out each task's [`FileSystem`]. The execution-environment layer implements it
/// to route a task's files to its backend and working directory.
pub trait FileSystemProvider: Send + Sync {
    /// The file system of `task_id` (already mapped: empty → `"default"`). Called on
    /// every file tool call, so it should be cheap (return a cached `Arc`).
    fn for_task(&self, task_id: &str) -> Arc<dyn FileSystem>;
}

/// A provider that gives every task the same file system (tests, embedders with a
/// single environment).
impl FileSystemProvider for Arc<dyn FileSystem> {
    fn for_task(&self, _task_id: &str) -> Arc<dyn FileSystem> {
        Arc::clone(self)
    }
}

/// The default provider: every task works on the host, in the process's working
/// directory unless a per-task working directory was set.
#[derive(Debug)]
pub struct LocalFileSystemProvider {
    default_cwd: PathBuf,
    task_cwds: RwLock<HashMap<String, PathBuf>>,
}

impl LocalFileSystemProvider {
    /// Tasks work in `default_cwd` (made absolute against the process directory).
    pub fn new(default_cwd: impl Into<PathBuf>) -> Self {
        LocalFileSystemProvider {
            default_cwd: absolute(default_cwd.into()),
            task_cwds: RwLock::new(HashMap::new()),
        }
    }

    /// Tasks work in the process's current directory (`/` if it cannot be read).
    pub fn from_process_cwd() -> Self {
        Self::new(std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/")))
    }

    /// Make `task_id` work in `cwd` (absolute, or relative to the default directory).
    pub fn set_task_cwd(&self, task_id: impl Into<String>, cwd: impl AsRef<Path>) {
        let cwd = normalize_lexically(&self.default_cwd.join(cwd.as_ref()));
        self.task_cwds
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(task_id.into(), cwd);
    }

    /// Forget `task_id`'s working directory.
    pub fn clear_task_cwd(&self, task_id: &str) {
        self.task_cwds
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(task_id);
    }
}

impl FileSystemProvider for LocalFileSystemProvider {
    fn for_task(&self, task_id: &str) -> Arc<dyn FileSystem> {
        let cwd = self
            .task_cwds
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(task_id)
            .cloned()
            .unwrap_or_else(|| self.default_cwd.clone());
        Arc::new(LocalFileSystem::new(cwd))
    }
}

fn absolute(path: PathBuf) -> PathBuf {
    if path.is_absolute() {
        normalize_lexically(&path)
    } else {
        let base = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
        normalize_lexically(&base.join(path))
    }
}

/// The default of [`FileSystem::resolve`], usable by any implementation.
pub fn resolve_path(path: &str, cwd: &Path, home: Option<&Path>) -> PathBuf {
    let expanded = match (path, home) {
        ("~", Some(home)) => home.to_path_buf(),
        (p, Some(home)) if p.starts_with("~/") => home.join(&p[2..]),
        (p, _) => PathBuf::from(p),
    };
    if expanded.is_absolute() {
        normalize_lexically(&expanded)
    } else {
        normalize_lexically(&cwd.join(expanded))
    }
}

/// Fold `.` and `..` components without touching the file system (`/..` stays `/`).
pub fn normalize_lexically(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                let at_root = matches!(
                    out.components().next_back(),
                    None | Some(Component::RootDir | Component::Prefix(_))
                );
                if !at_root {
                    out.pop();
                } else if !out.has_root() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_relative_absolute_and_tilde() {
        let cwd = Path::new("/work/repo");
        let home = Some(Path::new("/home/u"));
        let cases = [
            ("src/main.rs", "/work/repo/src/main.rs"),
            ("./a/../b.txt", "/work/repo/b.txt"),
            ("../other/x", "/work/other/x"),
            ("/etc/hosts", "/etc/hosts"),
            ("/a/./b/../c", "/a/c"),
            ("/..", "/"),
            ("~", "/home/u"),
            ("~/notes.md", "/home/u/notes.md"),
            ("~user/x", "/work/repo/~user/x"),
        ];
        for (input, want) in cases {
            assert_eq!(
                resolve_path(input, cwd, home),
                PathBuf::from(want),
                "{input}"
            );
        }
    }

    #[test]
    fn tilde_without_home_stays_relative() {
        let got = resolve_path("~/x", Path::new("/w"), None);
        assert_eq!(got, PathBuf::from("/w/~/x"));
    }

    #[test]
    fn provider_uses_per_task_cwd() {
        let provider = LocalFileSystemProvider::new("/base");
        provider.set_task_cwd("t1", "sub");
        provider.set_task_cwd("t2", "/elsewhere");
        assert_eq!(provider.for_task("t1").cwd(), PathBuf::from("/base/sub"));
        assert_eq!(provider.for_task("t2").cwd(), PathBuf::from("/elsewhere"));
        assert_eq!(provider.for_task("other").cwd(), PathBuf::from("/base"));
        provider.clear_task_cwd("t1");
        assert_eq!(provider.for_task("t1").cwd(), PathBuf::from("/base"));
        assert_eq!(
            provider.for_task("t2").resolve("f.txt"),
            PathBuf::from("/elsewhere/f.txt")
        );
    }
}
